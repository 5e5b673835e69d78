import { qualified, type RunnerSource, runnerOf } from '../runner.js';
import { QUARANTINE_REASONS, type QuarantineReason } from './vocabulary.js';

/**
 * A feed's open findings counted by reason (every reason present, 0 when none): one grouped count
 * on the partial index of open entries. The store's own table, read by the daemon's pool (metrics).
 */
export async function openFindingsByReason(source: RunnerSource, feed: string): Promise<Record<QuarantineReason, number>> {
  const runner = runnerOf(source);
  const rows = await runner.query<{ reason: string; open: number }>(
    `select reason, count(*)::int as open from ${qualified(runner, 'quarantine')} where feed = $1::text and resolved_at is null group by reason`,
    [feed],
  );
  const counts = Object.fromEntries(QUARANTINE_REASONS.map((reason) => [reason, 0])) as Record<QuarantineReason, number>;
  for (const row of rows) {
    if ((QUARANTINE_REASONS as readonly string[]).includes(row.reason)) counts[row.reason as QuarantineReason] = Number(row.open);
  }
  return counts;
}
