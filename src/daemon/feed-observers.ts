import type { Config } from '../config/config.js';
import type { Database } from '../db/connection.js';
import type { Logger } from '../log/log.js';
import { attachActivityLog } from '../sync/activity/activity-log.js';
import { attachFeedStopRecord } from '../sync/activity/feed-stop-record.js';
import { latestCheckpointMove } from '../sync/feed-admin/checkpoint-mover.js';
import type { WorkerState } from '../sync/state/worker-state.js';
import type { Closers } from './feed-workers.js';
import { startProgressReporter } from './progress.js';

/**
 * What watches one feed's worker state for the daemon: the progress line, the activity log, and
 * the stop record the console reads. Each closer goes into `closers`.
 */
export function attachFeedObservers(options: {
  feed: string;
  state: WorkerState;
  /** several feeds: logs name their feed, and progress is logged (one live line per terminal) */
  several: boolean;
  config: Config;
  database: Database;
  log: Logger;
  clock: { now(): number };
  closers: Closers;
}): void {
  const { feed, state, several, config, database, log, clock, closers } = options;
  const stopProgress = startProgressReporter({
    state,
    clock,
    log: log.child({ component: 'progress', ...(several ? { feed } : {}) }),
    tty: process.stderr.isTTY && !several ? process.stderr : undefined,
    intervalMs: config.PROGRESS_LOG_INTERVAL_MS,
  });
  closers.push({ what: 'progress', close: async () => stopProgress() });
  const stopActivity = attachActivityLog({
    state,
    clock,
    log: log.child({ component: 'activity', feed }),
    intervalMs: config.PROGRESS_LOG_INTERVAL_MS,
    whoMoved: () => latestCheckpointMove(database.db, feed),
  });
  closers.push({ what: 'activity log', close: async () => stopActivity() });
  // why the feed stopped, for the console (feed_overview), which cannot ask this process
  const detachStopRecord = attachFeedStopRecord({
    state,
    db: database.db,
    names: database.names,
    feed,
    log: log.child({ component: 'activity', feed }),
  });
  closers.push({ what: 'feed stop record', close: detachStopRecord });
}
