import type { Database } from '../db/connection.js';
import { readOutboxStats } from '../sync/outbox-stats.js';
import type { OutboxSource } from './metrics-provided-gauges.js';

/**
 * Reads the outbox for intake_sync_outbox_pending and intake_sync_outbox_oldest_pending_age_seconds.
 * The outbox belongs to the deployment, not to a feed: every process reports the same rows under
 * its own feed label, and the rules take the max.
 */
export function outboxSource(database: Database): OutboxSource {
  return async () => {
    const stats = await readOutboxStats(database.db);
    return { pending: stats.pending, oldestAgeSeconds: stats.oldestPendingAgeSeconds };
  };
}
