import { sql, type SQL } from 'drizzle-orm';
import type { StoreNames } from '../../db/store-names.js';

/**
 * Transaction advisory lock per (schema, feed) that orders outbox claims (shared) against the start
 * of an API version migration (exclusive). A claim reads the feed's current source and fixes it on
 * its row as the URL it sends through: either it commits before the start, which then sees that row
 * through the old URL and adds it to the migration's set, or it waits and reads the new source.
 * Transaction-level only (released at commit): safe behind a transaction-mode pooler.
 */
const SOURCE_LOCK_NAMESPACE = 7_307;

// the feed is a bound parameter; the schema keys it like the match lock, so two deployments never wait on each other
const key = (names: StoreNames, feed: string): SQL =>
  sql`${sql.raw(String(SOURCE_LOCK_NAMESPACE))}, hashtext(${`${names.schema}/${feed}`}::text)`;

/**
 * A statement of its own, before the transaction reads the sources: a statement's snapshot is taken
 * when it starts, so a read in the statement that waited for the lock could miss the start it waited for.
 */
export const sourceLockShared = (names: StoreNames, feed: string): SQL => sql`select pg_advisory_xact_lock_shared(${key(names, feed)})`;

/** Taken first by the transaction that records a migration's start. */
export const sourceLockExclusive = (names: StoreNames, feed: string): SQL => sql`select pg_advisory_xact_lock(${key(names, feed)})`;
