import type { Command } from 'commander';
import { loadConfig } from '../../../config/config.js';
import { composeConsole } from '../../../console/compose.js';
import { startConsole } from '../../../console/server.js';
import { createLogger } from '../../../log/log.js';
import { CliUsageError } from '../../context/errors.js';
import { shutdownOnSignal } from '../../../daemon/signals.js';
import { ssoSettings } from '../../../console/sso/settings.js';

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
      const deps = composeConsole(
        {
          databaseUrl: config.DATABASE_URL,
          schema: config.DATABASE_SCHEMA,
          caFile: config.DATABASE_CA_FILE,
          host: config.CONSOLE_HOST,
          idleTimeoutMs: config.CONSOLE_IDLE_TIMEOUT,
          sso: ssoSettings(config),
        },
        log,
      );
      const running = await startConsole(deps, config.CONSOLE_HOST, config.CONSOLE_PORT);
      log.info({ url: running.url, secure_cookies: deps.secureCookies, idle_timeout_ms: config.CONSOLE_IDLE_TIMEOUT }, 'console listening');
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
