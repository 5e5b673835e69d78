import type { BlockList } from 'node:net';
import type { Context } from 'hono';
import type postgres from 'postgres';
import type { Logger } from '../log/log.js';
import { runnerOfSql, type SqlApiRunner } from '../store-api/runner.js';
import type { ConnectionBudget } from './connection-budget.js';
import type { SignInLimiter } from './rate-limit.js';
import type { ConsoleSession, SessionStore } from './session-store.js';
import type { SsoSettings } from './sso/settings.js';
import type { DatabaseTarget } from './user-connection.js';

/** What every route is handed: nothing here reads the environment. */
export interface ConsoleDeps {
  store: SessionStore;
  limiter: SignInLimiter;
  /** CONSOLE_MAX_CONNECTIONS, less the session check's one */
  budget: ConnectionBudget;
  target: DatabaseTarget;
  /** cookies marked Secure and `__Host-`: CONSOLE_PUBLIC_URL is https, or the listener is not loopback */
  secureCookies: boolean;
  /** CONSOLE_TRUSTED_PROXIES: the peers whose X-Forwarded-For names the client */
  proxies?: BlockList | undefined;
  now: () => number;
  log: Logger;
  /** opens a signed-in role's connection (user-connection.ts; tests may count calls) */
  connect: (role: string, password: string) => Promise<postgres.Sql>;
  /** why the connection's role may not use the console (role-eligibility.ts), or undefined */
  refusal: (sql: postgres.Sql) => Promise<string | undefined>;
  /** the periodic session check: ends sessions past their time and those whose role may no longer sign in */
  checkSessions: () => Promise<void>;
  /** SSO mode (CONSOLE_TRUSTED_HEADER): the proxy's settings and how to connect as a mapped role */
  sso?: { settings: SsoSettings; connect: (role: string, actor: string) => Promise<postgres.Sql> } | undefined;
}

/** Hono's per-request variables of the console. */
export type ConsoleEnv = { Variables: { session: ConsoleSession } };

/**
 * The SQL API as the signed-in user: calls of src/store-api run on the session's own connection, in
 * the deployment's schema (DATABASE_SCHEMA was checked to be a plain name at config parse).
 */
export function asUser(c: Context<ConsoleEnv>, deps: ConsoleDeps): SqlApiRunner {
  return runnerOfSql(c.get('session').sql, deps.target.schema);
}
