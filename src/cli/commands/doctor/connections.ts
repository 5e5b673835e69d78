import { sql } from 'drizzle-orm';
import type { Config } from '../../../config/config.js';
import { DAEMON_POOL_CONNECTIONS, queryRows, type Database } from '../../../db/connection.js';
import { describeDroppedRoleGrants, droppedRoleGrants } from '../../../db/dropped-role-grants.js';
import { describeDatabaseError } from '../../../db/errors/describe-database-error.js';
import type { CheckResult } from './checks.js';

/** What one daemon process opens at most: its pool, the page connection, the lease session (docs/several-feeds.md). */
export const DAEMON_CONNECTIONS = DAEMON_POOL_CONNECTIONS + 1 + 1;

export interface ConnectionBudgetInput {
  maxConnections: number;
  /** superuser_reserved_connections + reserved_connections (PostgreSQL 16+): slots no daemon or console role gets */
  reserved: number;
  daemon: number;
  console: number;
  /** where the console's number came from, for the line */
  consoleSource: string;
}

/**
 * The worst case against max_connections: one daemon and one console at their limits, and how many
 * daemon processes fit beside one console. Fails when one of each does not fit. Pure.
 */
export function connectionBudget(input: ConnectionBudgetInput): CheckResult {
  const usable = Math.max(0, input.maxConnections - input.reserved);
  const worst = input.daemon + input.console;
  const room = Math.floor(Math.max(0, usable - input.console) / input.daemon);
  const detail =
    `worst case ${worst} of max_connections ${input.maxConnections} (${input.reserved} reserved): ` +
    `each daemon process ${input.daemon} (pool ${DAEMON_POOL_CONNECTIONS}, page 1, lease 1), ` +
    `the console ${input.console} (${input.consoleSource}); room for ${room} daemon process(es) beside one console`;
  return { check: 'connections', ok: worst <= usable, detail };
}

/** The server's limits, read; then connectionBudget. */
export async function checkConnections(config: Config, database: Database): Promise<CheckResult> {
  if (database.kind !== 'postgres') return { check: 'connections', ok: true, detail: 'embedded PGlite: no server connections' };
  try {
    const [row] = await queryRows<{ max: number; reserved: number }>(
      database.db,
      sql`select current_setting('max_connections')::int as max,
        (current_setting('superuser_reserved_connections')::int + coalesce(current_setting('reserved_connections', true)::int, 0)) as reserved`,
    );
    return connectionBudget({
      maxConnections: Number(row?.max),
      reserved: Number(row?.reserved),
      daemon: DAEMON_CONNECTIONS,
      console: config.CONSOLE_MAX_CONNECTIONS,
      consoleSource: 'CONSOLE_MAX_CONNECTIONS',
    });
  } catch (error) {
    return { check: 'connections', ok: false, detail: error instanceof Error ? describeDatabaseError(error) : String(error) };
  }
}

/** The feed records of dropped roles (found, not removed: doctor changes nothing; `migrate` removes them). */
export async function checkFeedRecords(database: Database): Promise<CheckResult> {
  if (database.kind !== 'postgres') return { check: 'feed records', ok: true, detail: 'embedded PGlite: one user, no feed records' };
  try {
    const [fn] = await queryRows<{ present: boolean }>(
      database.db,
      // a lookup inside a schema the role may not use raises instead of answering null
      sql`select has_schema_privilege(${database.names.schema}, 'USAGE')
        and to_regprocedure(${`"${database.names.schema}"._forget_dropped_roles(boolean)`}) is not null as present`,
    );
    if (!fn?.present)
      return {
        check: 'feed records',
        ok: false,
        detail: 'not checked: no usable intake-sync schema of this build for this role (see schema and grants)',
      };
    const found = await droppedRoleGrants(database, false);
    if (found.length === 0) return { check: 'feed records', ok: true, detail: 'every feed record names a current role' };
    const dropped = found.filter((g) => g.nowNamed === null);
    const renamed = found.filter((g) => g.nowNamed !== null);
    const parts: string[] = [];
    if (dropped.length > 0) {
      parts.push(
        `feed records of dropped roles: ${describeDroppedRoleGrants(dropped)}; they grant nothing; \`intake-sync migrate\` (as the owner) removes them`,
      );
    }
    for (const g of renamed) {
      parts.push(
        `role ${g.nowNamed} holds the OID recorded for ${g.roleName} and may use no feed: ` +
          `\`intake-sync grants --role app --to ${g.nowNamed} --feed NAME\` (as the owner) records its feeds`,
      );
    }
    return { check: 'feed records', ok: false, detail: parts.join('; ') };
  } catch (error) {
    return { check: 'feed records', ok: false, detail: error instanceof Error ? describeDatabaseError(error) : String(error) };
  }
}
