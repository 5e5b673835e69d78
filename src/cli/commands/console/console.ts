import type { Command } from 'commander';
import { ConfigError, loadConfig } from '../../../config/config.js';
import { composeConsole, requirePasswordAuth } from '../../../console/compose.js';
import { startConsole } from '../../../console/server.js';
import { createLogger } from '../../../log/log.js';
import { healthListenError } from '../../../daemon/health-port-error.js';
import { connectingTo } from '../../../db/connect-failure.js';
import { shutdownOnSignal } from '../../../daemon/signals.js';
import { ssoSettings, trustedProxiesSetting } from '../../../console/sso/settings.js';

const SHUTDOWN_GRACE_MS = 5_000;
const CONSOLE_LISTEN = { host: 'CONSOLE_HOST', port: 'CONSOLE_PORT' };

/** The sign-in settings are configuration: a bad one exits 2 naming its variable, as every other does. */
function asConfiguration<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new ConfigError((error as Error).message, { cause: error });
  }
}

/** `intake-sync console`: the operator console (docs/console.md) until SIGINT/SIGTERM. */
export function registerConsoleCommand(program: Command): void {
  program
    .command('console')
    .description('serve the operator console (feeds, quarantine, prescriptions, audit) on CONSOLE_HOST:CONSOLE_PORT')
    .action(async () => {
      const config = loadConfig();
      if (!config.DATABASE_URL) {
        throw new ConfigError('DATABASE_URL: is required by the console (it signs users in as PostgreSQL roles of that database)');
      }
      const log = createLogger({ level: config.LOG_LEVEL }).child({ component: 'console' });
      // only host, port and database are used (user-connection.ts): the URL's password leaves the process's view
      const databaseUrl = config.DATABASE_URL;
      delete process.env.DATABASE_URL;
      config.DATABASE_URL = undefined;
      const sso = asConfiguration(() => ssoSettings(config));
      const proxies = asConfiguration(() => trustedProxiesSetting(config));
      const deps = composeConsole(
        {
          databaseUrl,
          schema: config.DATABASE_SCHEMA,
          caFile: config.DATABASE_CA_FILE,
          host: config.CONSOLE_HOST,
          idleTimeoutMs: config.CONSOLE_IDLE_TIMEOUT,
          sessionMaxMs: config.CONSOLE_SESSION_MAX,
          publicUrl: config.CONSOLE_PUBLIC_URL,
          maxConnections: config.CONSOLE_MAX_CONNECTIONS,
          sessionsPerRole: config.CONSOLE_SESSIONS_PER_ROLE,
          proxies,
          sso,
        },
        log,
      );
      if (!sso) {
        // a database that cannot be reached is named as every command names it (DATABASE_URL, host, why)
        await connectingTo('DATABASE_URL', databaseUrl, () =>
          requirePasswordAuth(deps.target, {
            host: config.CONSOLE_HOST,
            allowTrust: config.CONSOLE_ALLOW_TRUST_AUTH === 'local-development',
            log,
          }),
        );
      }
      const running = await startConsole(deps, config.CONSOLE_HOST, config.CONSOLE_PORT).catch((error: unknown) => {
        throw healthListenError(error, config.CONSOLE_HOST, config.CONSOLE_PORT, CONSOLE_LISTEN);
      });
      log.info(
        {
          url: running.url,
          secure_cookies: deps.secureCookies,
          idle_timeout_ms: config.CONSOLE_IDLE_TIMEOUT,
          session_max_ms: config.CONSOLE_SESSION_MAX,
          max_connections: config.CONSOLE_MAX_CONNECTIONS,
        },
        'console listening',
      );
      await new Promise<void>((resolve, reject) => {
        const remove = shutdownOnSignal({
          graceMs: SHUTDOWN_GRACE_MS,
          log,
          shutdown: () =>
            running.close().then(() => {
              remove();
              resolve();
            }, reject),
        });
      });
    });
}
