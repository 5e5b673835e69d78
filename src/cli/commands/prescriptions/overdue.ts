import type { Command } from 'commander';
import { loadConfig } from '../../../config/config.js';
import { FEED_NAME_PATTERN, FEED_NAME_RULE } from '../../../db/feed-name.js';
import { CliUsageError } from '../../context/errors.js';
import { printJson, printTable } from '../../context/output.js';
import { withStore } from '../../context/store-context.js';
import { overdueLongestFirst } from '../../../store-api/overdue/overdue-prescriptions.js';

/** Stored text shown on a terminal: control characters as \\uXXXX, so an identifier cannot move the cursor. */
export function escapeControl(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `3h 5m` of whole seconds. */
export function overdueText(seconds: number): string {
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3_600);
  const m = Math.floor((seconds % 3_600) / 60);
  return d > 0 ? `${d}d ${h}h` : h > 0 ? `${h}h ${m}m` : `${m}m`;
}

/** Registers `prescriptions overdue` (issue 28): identifiers, stages and times only, no PHI. */
export function registerPrescriptionOverdueCommand(prescriptions: Command): void {
  prescriptions
    .command('overdue')
    .description('list the prescriptions past their stage deadline (OVERDUE_*), longest overdue first; exit 0')
    .option('--feed <name>', 'only this feed (default: every feed)')
    .option('--json', 'print one JSON line per prescription')
    .action(async (options: { feed?: string; json?: boolean }) => {
      if (options.feed !== undefined && !FEED_NAME_PATTERN.test(options.feed)) throw new CliUsageError(`--feed: ${FEED_NAME_RULE}`);
      const config = loadConfig();
      // the same call as the Node API's overdue(): one reading of overdue_prescriptions, longest overdue first
      const rows = await withStore(config, ({ db }) => overdueLongestFirst(db, options.feed ?? null));
      const out = rows.map((r) => ({
        feed: r.feed,
        external_id: r.external_id,
        stage: r.stage,
        since: new Date(r.since).toISOString(),
        overdue_by_seconds: Number(r.overdue_by_seconds),
      }));
      if (options.json) {
        for (const row of out) printJson(row);
        return;
      }
      printTable(
        ['feed', 'external_id', 'stage', 'since', 'overdue_by'] as const,
        out.map((r) => ({ ...r, external_id: escapeControl(r.external_id), overdue_by: overdueText(r.overdue_by_seconds) })),
      );
    });
}
