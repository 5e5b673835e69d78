import { sql } from 'drizzle-orm';
import type { Db } from './connection.js';
import { namesOf } from './store-names.js';

// Postgres' identifier limit is 63 bytes: `<schema>_status` keeps the schema's first 56 (statusChannel, src/api)
const MAX_SCHEMA_PREFIX = 56;

/**
 * Wakes the change followers after a commit that changed statuses: an empty NOTIFY in a statement
 * of its own, after the commit, never in it (issue 33 §2: a notifying transaction fails at COMMIT
 * when the cluster's queue is full, and any login can pin it). Skipped past half a queue; a failure
 * is ignored, since followers read at least every poll interval. Not awaited by the page.
 */
export function sendStatusWakeup(db: Db): Promise<void> {
  const channel = `${namesOf(db).schema.slice(0, MAX_SCHEMA_PREFIX)}_status`;
  return db.execute(sql`select pg_notify(${channel}::text, '') where pg_notification_queue_usage() < 0.5`).then(
    () => undefined,
    () => undefined,
  );
}
