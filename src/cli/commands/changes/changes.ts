import type { Command } from 'commander';
import { terminalSafe } from '../../../lib/terminal-text.js';
import { loadConfig } from '../../../config/config.js';
import { describeDatabaseError } from '../../../db/errors/describe-database-error.js';
import { createLogger } from '../../../log/log.js';
import { followStatusChanges } from '../../../api/change-follower.js';
import type { StatusChange } from '../../../api/status-change.js';
import { CliUsageError } from '../../context/errors.js';
import { printJson } from '../../context/output.js';
import { shutdownOnSignal } from '../../../daemon/signals.js';

/** One readable line per change: identifiers and statuses only (never names or dates of birth). */
export function formatChangeLine(change: StatusChange): string {
  const from = change.previous_status ?? '-';
  return terminalSafe(
    `${change.changed_at}  ${change.external_id}  ${from} -> ${change.new_status}  event ${change.event_id ?? '-'}  cursor ${change.cursor}`,
  );
}

/** An error the follower ended on, with what to do about the likely causes. */
function describeFollowError(error: unknown, schema: string, since: string | undefined): Error {
  if (error instanceof Error && error.name === 'CursorExpiredError') {
    return new Error(`changes follow: ${error.message}; run again without --since to read from the oldest change kept`, { cause: error });
  }
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  // the function refuses a malformed cursor (22023): bad input from --since, exit 2 like any bad argument
  if (code === '22023' && since !== undefined) {
    return new CliUsageError(`--since: not a cursor this feed returned (${describeDatabaseError(error)})`, { cause: error });
  }
  if (code === '42883' || code === '3F000') {
    return new Error(
      `changes follow: ${schema}.status_changes_since does not exist: run \`intake-sync migrate\` (${describeDatabaseError(error)})`,
      { cause: error },
    );
  }
  return new Error(`changes follow: ${describeDatabaseError(error)}`, { cause: error });
}

/** Registers `changes follow`. */
export function registerChangesCommands(program: Command): void {
  const changes = program.command('changes').description('the change feed: status changes in commit order');
  changes
    .command('follow')
    .description('print status changes as they commit, like tail -f; each line ends with the cursor to resume after it')
    .option('--since <cursor>', 'resume after this cursor (default: from the first change)')
    .option('--json', 'one JSON object per line, cursor included')
    .action(async (options: { since?: string; json?: boolean }) => {
      const config = loadConfig();
      if (!config.DATABASE_URL) {
        throw new CliUsageError(
          'changes follow needs DATABASE_URL: it follows a PostgreSQL server (the embedded store has no other clients)',
        );
      }
      const log = createLogger({ level: config.LOG_LEVEL }).child({ component: 'changes-follow' });
      const stopping = new AbortController();
      const removeHandlers = shutdownOnSignal({
        graceMs: config.SHUTDOWN_GRACE_MS,
        log,
        shutdown: async () => stopping.abort(),
      });
      try {
        const changes = followStatusChanges({
          url: config.DATABASE_URL,
          caFile: config.DATABASE_CA_FILE,
          schema: config.DATABASE_SCHEMA,
          since: options.since ?? null,
          signal: stopping.signal,
          pollIntervalMs: config.POLL_INTERVAL_MS,
          applicationName: 'intake-sync changes follow',
          onReconnect: ({ attempt, delayMs, error }) =>
            log.warn(
              { attempt, delayMs, error: describeDatabaseError(error) },
              'connection lost: reconnecting, resuming after the last printed cursor',
            ),
        });
        for await (const change of changes) {
          if (options.json) printJson(change);
          else process.stdout.write(`${formatChangeLine(change)}\n`);
        }
      } catch (error) {
        throw describeFollowError(error, config.DATABASE_SCHEMA, options.since);
      } finally {
        removeHandlers();
      }
    });
}
