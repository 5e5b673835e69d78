import { sql, type SQL } from 'drizzle-orm';
import type { StoreNames } from '../../db/store-names.js';

/**
 * The source lock of one feed: orders outbox claims (shared) against the start of an API version
 * migration (exclusive). A claim reads the feed's current source and fixes it on its row as the URL
 * it sends through: either it commits before the start, which then sees that row through the old URL
 * and adds it to the migration's set, or it waits and reads the new source.
 * The feed's 'source' row of feed_locks (drizzle/0017_lock_tables.sql), taken through _feed_lock and
 * released at commit: a login without a grant cannot hold it (issue 25; it was an advisory lock).
 * Transaction-level only: safe behind a transaction-mode pooler.
 */
const feedLock = (names: StoreNames, feed: string, exclusive: boolean): SQL =>
  sql`select ${names.qualified('_feed_lock')}(${feed}::text, 'source', ${exclusive}::boolean)`;

/**
 * A statement of its own, before the transaction reads the sources: a statement's snapshot is taken
 * when it starts, so a read in the statement that waited for the lock could miss the start it waited for.
 */
export const sourceLockShared = (names: StoreNames, feed: string): SQL => feedLock(names, feed, false);

/** Taken first by the transaction that records a migration's start. */
export const sourceLockExclusive = (names: StoreNames, feed: string): SQL => feedLock(names, feed, true);
