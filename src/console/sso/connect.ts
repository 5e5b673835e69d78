import type postgres from 'postgres';
import { createPostgresClient } from '../../db/postgres-client.js';
import type { DatabaseTarget } from '../user-connection.js';
import type { SsoSettings } from './settings.js';

/**
 * A session's connection in SSO mode: the console's login role (CONSOLE_LOGIN_ROLE, never
 * DATABASE_URL's) with `role` set to the mapped role in the startup packet, so every statement
 * on every socket of this pool runs as that role (its grants decide), and `intake_sync.actor`
 * set to the proxy's identity for the audit's on_behalf_of. Proven with one query.
 */
export async function connectAsMappedRole(target: DatabaseTarget, sso: SsoSettings, role: string, actor: string): Promise<postgres.Sql> {
  const sql = createPostgresClient(
    target.url,
    {
      username: sso.loginRole,
      ...(sso.loginPassword === undefined ? {} : { password: sso.loginPassword }),
      max: 1,
      connect_timeout: 10,
      idle_timeout: 300,
      fetch_types: false,
      onnotice: () => {},
      connection: {
        application_name: 'intake-sync-console',
        statement_timeout: 15_000,
        idle_in_transaction_session_timeout: 30_000,
        // no JIT for the pages' small queries (user-connection.ts says why)
        jit: 'off',
        role,
        'intake_sync.actor': actor,
      } as Record<string, string | number>,
    },
    { variable: 'CONSOLE_LOGIN_ROLE', caFile: target.caFile },
  );
  try {
    const [row] = await sql<{ current_user: string }[]>`select current_user`;
    if (row?.current_user !== role) throw Object.assign(new Error('the mapped role was not taken'), { code: 'SSO_ROLE' });
    return sql;
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw error;
  }
}
