import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import type { Config } from '../../../config/config.js';
import { connectingTo } from '../../../db/connect-failure.js';
import { probeConnection, type ConnectionProbe } from '../../../db/connection-probe.js';
import { openDatabase, queryRows, type Database } from '../../../db/connection.js';
import { describeDatabaseError } from '../../../db/errors/describe-database-error.js';
import { missingGrants } from '../../../db/grants.js';
import { roleLikeness } from '../../../db/role-likeness.js';
import { missingRuntimeGrantsAdvice } from '../../../daemon/role-advice.js';
import { readSchemaLevel } from '../../../db/schema-level.js';
import { planSessions } from '../../../db/session-plan.js';
import { databaseTarget } from '../../../db/url-target.js';
import type { FeedConfig } from '../../../config/feeds-file.js';
import { intakeClientFor } from '../../../config/intake-client.js';

/** One line of `doctor`: what was checked, whether it passed, and what was found (never a secret or PHI). */
export interface CheckResult {
  check: string;
  ok: boolean;
  detail: string;
}

const message = (error: unknown): string => (error instanceof Error ? describeDatabaseError(error) : String(error));

/** What the database checks share: the probe of DATABASE_URL and an open handle (no migration). */
export interface DatabaseReach {
  database: Database;
  probe: ConnectionProbe | undefined;
}

/**
 * Reaches the configured store WITHOUT migrating or writing: DATABASE_URL probed (pooler or not) and
 * asked about its TLS (pg_stat_ssl of this backend: behind a pooler, the pooler's own connection to
 * Postgres), or embedded PGlite under DATA_DIR.
 */
export async function checkDatabase(config: Config): Promise<{ result: CheckResult; reach?: DatabaseReach }> {
  const url = config.DATABASE_URL;
  if (!url) {
    const database = await openDatabase({ dataDir: join(config.DATA_DIR, 'pglite'), schema: config.DATABASE_SCHEMA });
    return {
      result: { check: 'database', ok: true, detail: `embedded PGlite under ${config.DATA_DIR}/pglite (no DATABASE_URL)` },
      reach: { database, probe: undefined },
    };
  }
  const target = databaseTarget(url);
  try {
    const probe = await connectingTo('DATABASE_URL', url, () => probeConnection(url));
    const pooled = probe.transactionPooling || !probe.acceptsStartupParameters;
    const database = await openDatabase({ url, schema: config.DATABASE_SCHEMA, pooled, max: 1 });
    const [tls] = await queryRows<{ ssl: boolean | null; version: string | null }>(
      database.db,
      sql`select ssl, version from pg_stat_ssl where pid = pg_backend_pid()`,
    );
    const tlsText = tls?.ssl ? `TLS ${tls.version ?? 'on'}` : 'no TLS';
    const via = pooled ? `through a connection pooler (${probe.evidence})` : 'direct (no transaction pooler)';
    return {
      result: {
        check: 'database',
        ok: true,
        detail: `${target.address} database ${probe.database}, ${tlsText}${pooled ? ' (pooler to server)' : ''}, ${via}`,
      },
      reach: { database, probe },
    };
  } catch (error) {
    return { result: { check: 'database', ok: false, detail: message(error) } };
  }
}

/** The schema's migration level against this build: current, behind (run migrate) or ahead (a newer build migrated it). */
export async function checkSchema(database: Database): Promise<CheckResult> {
  try {
    const level = await readSchemaLevel(database);
    const schema = database.names.schema;
    if (level.applied === 0)
      return { check: 'schema', ok: false, detail: `no intake-sync schema "${schema}" yet: run \`intake-sync migrate\` as the owner role` };
    if (level.unknown > 0)
      return {
        check: 'schema',
        ok: false,
        detail: `"${schema}" is newer than this build (${level.unknown} migration(s) it does not know): deploy the version that migrated it`,
      };
    if (level.pending.length > 0)
      return {
        check: 'schema',
        ok: false,
        detail: `"${schema}" is behind (pending: ${level.pending.join(', ')}): run \`intake-sync migrate\` as the owner role`,
      };
    return { check: 'schema', ok: true, detail: `"${schema}" at ${level.latest} (${level.applied}/${level.expected} migrations)` };
  } catch (error) {
    return { check: 'schema', ok: false, detail: message(error) };
  }
}

/** Every grant the daemon needs (src/db/grants.ts, role runtime), held by the connected role. */
export async function checkGrants(database: Database): Promise<CheckResult> {
  if (database.kind !== 'postgres') return { check: 'grants', ok: true, detail: 'embedded PGlite: one user, nothing to grant' };
  try {
    const missing = await missingGrants(database, 'runtime');
    const { role, likeness } = await roleLikeness(database);
    if (missing.length === 0) return { check: 'grants', ok: true, detail: `role ${role} holds every runtime grant` };
    return { check: 'grants', ok: false, detail: missingRuntimeGrantsAdvice({ role, likeness, missing, schema: database.names.schema }) };
  } catch (error) {
    return { check: 'grants', ok: false, detail: message(error) };
  }
}

/** Where the feed lease (a lease row held by one session's backend) goes: LEASE_DATABASE_URL, direct and the same database, or DATABASE_URL when it is direct. */
export async function checkLease(config: Config, reach: DatabaseReach): Promise<CheckResult> {
  const databaseUrl = config.DATABASE_URL;
  if (!databaseUrl || !reach.probe) return { check: 'lease', ok: true, detail: 'embedded PGlite: a single process, no lease' };
  const leaseUrl = config.LEASE_DATABASE_URL;
  try {
    const lease = leaseUrl ? await connectingTo('LEASE_DATABASE_URL', leaseUrl, () => probeConnection(leaseUrl)) : undefined;
    const decided = planSessions({ databaseUrl, database: reach.probe, leaseUrl, lease });
    if (!decided.ok) return { check: 'lease', ok: false, detail: decided.problems.map((p) => `${p.variable} ${p.message}`).join('; ') };
    if (decided.plan.noSession)
      return { check: 'lease', ok: false, detail: `${decided.plan.noSession.variable} ${decided.plan.noSession.message}` };
    return {
      check: 'lease',
      ok: true,
      detail: leaseUrl
        ? `LEASE_DATABASE_URL ${databaseTarget(leaseUrl).address}: direct, same database`
        : 'on DATABASE_URL (direct: no LEASE_DATABASE_URL needed)',
    };
  } catch (error) {
    return { check: 'lease', ok: false, detail: message(error) };
  }
}

/** The feed's operator with its configured credentials: GET /events?limit=1, nothing applied, no retries. */
export async function checkOperator(config: Config, feed: FeedConfig): Promise<CheckResult> {
  const check = `operator ${feed.name}`;
  if (!feed.baseUrl) return { check, ok: true, detail: 'embedded sandbox (no INTAKE_API_BASE_URL): nothing to reach' };
  try {
    const client = intakeClientFor(
      config,
      { baseUrl: feed.baseUrl, apiKey: feed.apiKey ?? '', apiSecret: feed.apiSecret ?? '' },
      // one attempt: doctor says what is wrong now, it does not wait for it to pass
      { retry: { retries: 0 } },
    );
    const page = await client.listEvents({ limit: 1 });
    return {
      check,
      ok: true,
      detail: `${feed.baseUrl}: credentials accepted (GET /events answered, ${page.events.length} event read, nothing applied)`,
    };
  } catch (error) {
    return { check, ok: false, detail: `${feed.baseUrl}: ${message(error)}` };
  }
}
