import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { osActor } from '../db/audit.js';
import { listQuarantine, QUARANTINE_REASONS, type QuarantineReason } from '../sync/matching/quarantine.js';
import { rematch } from '../sync/matching/rematch.js';
import { CliUsageError } from './errors.js';
import { commandFeed, withFeedOption } from './feed-context.js';
import { printFields, printJson, printTable } from './output.js';
import { withStore } from './store-context.js';

function parseReason(value: string | undefined): QuarantineReason | undefined {
  if (value === undefined) return undefined;
  if ((QUARANTINE_REASONS as readonly string[]).includes(value)) return value as QuarantineReason;
  throw new CliUsageError(`--reason must be one of ${QUARANTINE_REASONS.join(', ')} (got "${value}")`);
}

/** Registers `quarantine list`. */
export function registerQuarantineCommands(program: Command): void {
  const quarantine = program.command('quarantine').description('events that could not be applied: malformed, unmatched, ambiguous');
  withFeedOption(quarantine.command('list'))
    .description('open findings, oldest first (raw bodies are never printed: they can hold PHI)')
    .option('--reason <reason>', `only this reason: ${QUARANTINE_REASONS.join(', ')}`)
    .option('--all', 'include findings already resolved by rematch')
    .option('--json', 'one JSON object per line')
    .action(async (options: { feed?: string; reason?: string; all?: boolean; json?: boolean }) => {
      const reason = parseReason(options.reason);
      const config = loadConfig();
      const feed = commandFeed(config, options.feed).name;
      const rows = await withStore(config, ({ db }) => listQuarantine(db, { feed, reason, includeResolved: options.all }));
      if (options.json) for (const row of rows) printJson(row);
      else printTable(['event_id', 'reason', 'seen_count', 'last_seen_at', 'resolved_at', 'detail'], rows);
    });
}

/** Registers `rematch`. */
export function registerRematchCommand(program: Command): void {
  withFeedOption(program.command('rematch'))
    .description('match unmatched and ambiguous events again against the local prescriptions')
    .option('--json', 'print the result as one JSON line')
    .action(async (options: { feed?: string; json?: boolean }) => {
      const config = loadConfig();
      const feed = commandFeed(config, options.feed).name;
      const result = await withStore(config, ({ db }) => rematch(db, { feed }, { onBehalfOf: osActor() }));
      if (options.json) printJson(result);
      else {
        printFields([
          ['examined', result.examined],
          ['matched', result.matched],
          ['still unmatched', result.stillUnmatched],
          ['still ambiguous', result.stillAmbiguous],
        ]);
      }
    });
}
