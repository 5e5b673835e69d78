import type { Database } from '../db/connection.js';
import { readOutboxStats } from '../store-api/outbox/outbox-stats.js';
import type { OutboxSource } from './metrics-provided-gauges.js';

/**
 * Reads the outbox for intake_sync_outbox_pending and intake_sync_outbox_oldest_pending_age_seconds:
 * the feed's rows (each feed's outbox is delivered by its own leader), or without a feed the whole
 * deployment's. Every process reports its feeds, leader or not, and the rules take the max.
 */
export function outboxSource(database: Database, feed?: string): OutboxSource {
  return async () => {
    const stats = await readOutboxStats(database.db, feed);
    return { pending: stats.pending, oldestAgeSeconds: stats.oldestPendingAgeSeconds };
  };
}
