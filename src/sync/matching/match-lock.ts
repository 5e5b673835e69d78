import { sql, type SQL } from 'drizzle-orm';
import type { StoreNames } from '../../db/store-names.js';

/**
 * The match lock of one feed: orders page applies (shared) against local registration and rematch
 * (exclusive). Without it a page could match before a registration commits and be quarantined
 * after that registration's rematch ran, leaving an event unmatched although its prescription exists.
 *
 * A row lock on the feed's 'match' row of feed_locks (drizzle/0017_lock_tables.sql), taken through
 * _feed_lock (sql/api), released at commit. A row lock needs UPDATE privilege on the table, which
 * only the owner has (the runtime role reaches it through _feed_lock, app roles through the SQL
 * API's SECURITY DEFINER functions for their own feeds): a login without a grant cannot hold it, as
 * it could the advisory lock this replaced (issue 25). Per feed: a registration never waits on
 * another feed's pages, nor they on it.
 */
const feedLock = (names: StoreNames, feed: string | null, exclusive: boolean): SQL =>
  sql`${names.qualified('_feed_lock')}(${feed}::text, 'match', ${exclusive}::boolean)`;

/** Expression taking the feed's match lock in shared mode (page apply); released at commit. */
export const matchLockShared = (names: StoreNames, feed: string): SQL => feedLock(names, feed, false);

/**
 * Expression taking the match lock exclusively (registration, rematch); released at commit. A null
 * feed takes every feed's, in feed order (the rematch of every feed).
 */
export const matchLockExclusive = (names: StoreNames, feed: string | null): SQL => feedLock(names, feed, true);
