import type { Logger } from '../log/log.js';
import type { ConsoleDeps } from './context.js';
import { AttemptLimiter, SIGN_IN_LIMIT } from './rate-limit.js';
import { isLoopbackHost } from './server.js';
import { SessionStore } from './session-store.js';
import { connectAsMappedRole } from './sso/connect.js';
import type { SsoSettings } from './sso/settings.js';
import { connectAsRole, databaseTarget } from './user-connection.js';

/** The console's settings, as config.ts parsed them. */
export interface ConsoleSettings {
  databaseUrl: string;
  schema: string;
  caFile?: string | undefined;
  host: string;
  idleTimeoutMs: number;
  /** the trusted-header sign-in mode, when CONSOLE_TRUSTED_HEADER is set (sso/settings.ts) */
  sso?: SsoSettings | undefined;
}

/** Builds the console's collaborators from its settings; `now` is injected (tests move it). */
export function composeConsole(settings: ConsoleSettings, log: Logger, now: () => number = Date.now): ConsoleDeps {
  const target = databaseTarget(settings.databaseUrl, settings.schema, settings.caFile);
  return {
    store: new SessionStore(settings.idleTimeoutMs, now),
    limiter: new AttemptLimiter(SIGN_IN_LIMIT, now),
    target,
    secureCookies: !isLoopbackHost(settings.host),
    now,
    log,
    connect: (role, password) => connectAsRole(target, role, password),
    sso: settings.sso && {
      settings: settings.sso,
      connect: (role, actor) => connectAsMappedRole(target, settings.sso as SsoSettings, role, actor),
    },
  };
}
