import { qualified, type RunnerSource, runnerOf } from '../runner.js';

/** A feed's checkpoint row: where it is and what it applied. */
export interface CheckpointFacts {
  iterator: string | null;
  version: number;
  updated_at: Date;
  pages_applied: number;
  events_applied: number;
  events_quarantined: number;
}

/** The feed's checkpoint (feed_checkpoints), or undefined before its first page. */
export async function checkpointFacts(source: RunnerSource, feed: string): Promise<CheckpointFacts | undefined> {
  const runner = runnerOf(source);
  const [row] = await runner.query<Record<string, unknown>>(
    `select iterator, version, updated_at, pages_applied, events_applied, events_quarantined
       from ${qualified(runner, 'feed_checkpoints')} where feed = $1::text`,
    [feed],
  );
  if (!row) return undefined;
  return {
    iterator: (row.iterator as string | null) ?? null,
    version: Number(row.version),
    updated_at: new Date(row.updated_at as string | Date),
    pages_applied: Number(row.pages_applied),
    events_applied: Number(row.events_applied),
    events_quarantined: Number(row.events_quarantined),
  };
}

/** The feed's local prescriptions counted by status (`none` before their first event). */
export async function prescriptionsByStatus(source: RunnerSource, feed: string): Promise<Record<string, number>> {
  const runner = runnerOf(source);
  const rows = await runner.query<{ status: string | null; count: unknown }>(
    `select status, count(*) as count from ${qualified(runner, 'prescriptions')} where feed = $1::text group by status`,
    [feed],
  );
  const byStatus: Record<string, number> = {};
  for (const row of rows) byStatus[row.status ?? 'none'] = Number(row.count);
  return byStatus;
}

/** How many events the feed's history holds. */
export async function eventCount(source: RunnerSource, feed: string): Promise<number> {
  const runner = runnerOf(source);
  const [row] = await runner.query<{ count: unknown }>(
    `select count(*) as count from ${qualified(runner, 'events')} where feed = $1::text`,
    [feed],
  );
  return Number(row?.count ?? 0);
}

/** The reason the feed's leading worker recorded in feed_stops (a stop, or pages blocked on a lock with its holder), or null. */
export async function recordedStop(source: RunnerSource, feed: string): Promise<string | null> {
  const runner = runnerOf(source);
  const [row] = await runner.query<{ reason: string }>(`select reason from ${qualified(runner, 'feed_stops')} where feed = $1::text`, [
    feed,
  ]);
  return row?.reason ?? null;
}
