import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import { namesOf } from '../../db/store-names.js';

/** Outbox backlog for status and metrics: pending rows and how long the oldest has waited. */
export interface OutboxStats {
  pending: number;
  /** 0 when nothing is pending */
  oldestPendingAgeSeconds: number;
}

/**
 * Reads the outbox backlog (of one feed, or of every feed) by the database clock. Only pending rows are read (a partial index
 * covers them), so a scrape costs the same however many rows were delivered over the years.
 */
export async function readOutboxStats(db: Db, feed?: string): Promise<OutboxStats> {
  const n = namesOf(db);
  // without a feed: the whole deployment's outbox
  const ofFeed = feed === undefined ? sql`` : sql` and feed = ${feed}::text`;
  const [row] = await queryRows<Record<string, unknown>>(
    db,
    sql`select count(*) as pending, coalesce(extract(epoch from now() - min(created_at)), 0) as oldest
        from ${n.outbox} where state = 'pending'${ofFeed}`,
  );
  return {
    pending: Number(row?.pending ?? 0),
    oldestPendingAgeSeconds: Math.max(0, Math.round(Number(row?.oldest ?? 0))),
  };
}
