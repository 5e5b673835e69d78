import type { Command } from 'commander';
import { loadConfig } from '../../../config/config.js';
import { composeConsole, requirePasswordAuth } from '../../../console/compose.js';
import { startConsole } from '../../../console/server.js';
import { createLogger } from '../../../log/log.js';
import { CliUsageError } from '../../context/errors.js';
import { shutdownOnSignal } from '../../../daemon/signals.js';
import { ssoSettings, trustedProxiesSetting } from '../../../console/sso/settings.js';

const SHUTDOWN_GRACE_MS = 5_000;

/** `intake-sync console`: the operator console (docs/console.md) until SIGINT/SIGTERM. */
export function registerConsoleCommand(program: Command): void {
  program
    .command('console')
    .description('serve the operator console (feeds, quarantine, prescriptions, audit) on CONSOLE_HOST:CONSOLE_PORT')
    .action(async () => {
      const config = loadConfig();
      if (!config.DATABASE_URL) {
        throw new CliUsageError('DATABASE_URL: required by the console (it signs users in as PostgreSQL roles of that database)');
      }
      const log = createLogger({ level: config.LOG_LEVEL }).child({ component: 'console' });
      // only host, port and database are used (user-connection.ts): the URL's password leaves the process's view
      const databaseUrl = config.DATABASE_URL;
      delete process.env.DATABASE_URL;
      config.DATABASE_URL = undefined;
      const sso = ssoSettings(config);
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
          proxies: trustedProxiesSetting(config),
          sso,
        },
        log,
      );
      if (!sso) {
        await requirePasswordAuth(deps.target, {
          host: config.CONSOLE_HOST,
          allowTrust: config.CONSOLE_ALLOW_TRUST_AUTH === 'local-development',
          log,
        });
      }
      const running = await startConsole(deps, config.CONSOLE_HOST, config.CONSOLE_PORT);
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
