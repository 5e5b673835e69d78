import { sql } from 'drizzle-orm';
import { queryRows, type Database } from './connection.js';
import { UnsupportedServerError } from './errors/unsupported-server-error.js';

/** The oldest PostgreSQL major this release runs on; CI proves every major from it to the newest listed. */
export const MIN_SERVER_MAJOR = 14;
/** The newest major CI runs the SQL tests against (scripts/pg-matrix.sh). Newer ones are not refused, only unproven. */
export const MAX_TESTED_SERVER_MAJOR = 18;

/** The supported range as users read it. */
export const SUPPORTED_SERVER_RANGE = `PostgreSQL ${MIN_SERVER_MAJOR} to ${MAX_TESTED_SERVER_MAJOR}`;

/**
 * Why this server cannot be used, or undefined when it can. `versionNum` is `server_version_num`
 * (170004 for 17.4, 90624 for 9.6.24); `version` is `server_version`, for the message.
 */
export function serverVersionProblem(versionNum: number, version: string): string | undefined {
  if (!Number.isInteger(versionNum) || versionNum <= 0) {
    return `could not read the server's version (server_version_num ${JSON.stringify(String(versionNum))}); intake-sync supports ${SUPPORTED_SERVER_RANGE}`;
  }
  // from 10 on, the major is the number divided by 10000; before, 9.6 was 90600
  const major = versionNum >= 100_000 ? Math.floor(versionNum / 10_000) : versionNum / 10_000;
  if (major < MIN_SERVER_MAJOR) {
    return `the database server runs PostgreSQL ${version} (server_version_num ${versionNum}); intake-sync supports ${SUPPORTED_SERVER_RANGE}: upgrade the server`;
  }
  return undefined;
}

/** Reads the server's version and refuses one older than MIN_SERVER_MAJOR (UnsupportedServerError). */
export async function assertSupportedServer(database: Database): Promise<void> {
  // PGlite is the embedded store this build ships: its version is this build's own
  if (database.kind !== 'postgres') return;
  const [row] = await queryRows<{ num: string; version: string }>(
    database.db,
    sql`select current_setting('server_version_num') as num, current_setting('server_version') as version`,
  );
  const problem = serverVersionProblem(Number(row?.num), String(row?.version ?? '?'));
  if (problem) throw new UnsupportedServerError(problem);
}
