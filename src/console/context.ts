import type { Logger } from '../log/log.js';
import type { AttemptLimiter } from './rate-limit.js';
import type { ConsoleSession, SessionStore } from './session-store.js';
import type { DatabaseTarget } from './user-connection.js';

/** What every route is handed: nothing here reads the environment. */
export interface ConsoleDeps {
  store: SessionStore;
  limiter: AttemptLimiter;
  target: DatabaseTarget;
  /** cookies marked Secure: everywhere but a loopback listener */
  secureCookies: boolean;
  now: () => number;
  log: Logger;
  /** opens a signed-in role's connection (user-connection.ts; tests may count calls) */
  connect: (role: string, password: string) => Promise<import('postgres').Sql>;
  /** SSO mode (CONSOLE_TRUSTED_HEADER): the proxy's settings and how to connect as a mapped role */
  sso?:
    | { settings: import('./sso/settings.js').SsoSettings; connect: (role: string, actor: string) => Promise<import('postgres').Sql> }
    | undefined;
}

/** Hono's per-request variables of the console. */
export type ConsoleEnv = { Variables: { session: ConsoleSession } };

/** The schema, quoted for SQL text (DATABASE_SCHEMA was checked to be a plain name at config parse). */
export function schemaOf(deps: ConsoleDeps): string {
  return `"${deps.target.schema}"`;
}
