import { sql } from 'drizzle-orm';
import { queryRows, type Db } from './connection.js';
import { FEED_NAME_PATTERN } from './feed-name.js';
import { namesOf } from './store-names.js';

/**
 * Whose feed a checkpoint row is (0011_hardening.sql): `operator` once a run with a base URL claimed
 * it, `simulator` once the built-in demo did, null while only registered (migrate, a reset).
 */
export type FeedOrigin = 'operator' | 'simulator';

/** A feed of another origin found where a claim was made: the claim was refused, nothing written. */
export interface FeedOriginConflict {
  feed: string;
  origin: FeedOrigin;
}

/**
 * Which existing feed forbids claiming `claimed` for `origin`, or null. Pure. The simulator may never
 * share a database with an operator's feed (it resets checkpoints and seeds rows), and a real run
 * never shares one with the demo's (its checkpoint points into a simulated feed, its rows were never
 * sent to a pharmacy): one database, one kind.
 */
export function feedOriginConflict(
  existing: ReadonlyArray<{ feed: string; origin: FeedOrigin | null }>,
  origin: FeedOrigin,
): FeedOriginConflict | null {
  const other = existing.find((row) => row.origin !== null && row.origin !== origin);
  return other ? { feed: other.feed, origin: other.origin as FeedOrigin } : null;
}

/**
 * Records `feeds` as configured (a checkpoint row at the beginning, if none) and, with `origin`,
 * claims them for it: refused (returned, nothing written) when the database holds a feed of the
 * other origin. Serialised by the schema's 'claim' row of feed_locks (FOR UPDATE through _feed_lock,
 * drizzle/0017_lock_tables.sql), so a demo and a real run starting at once cannot both pass the
 * check; a row lock, not an advisory lock, so a login without a grant cannot hold it (issue 25).
 */
export async function registerFeeds(db: Db, feeds: readonly string[], origin: FeedOrigin | null): Promise<FeedOriginConflict | null> {
  const n = namesOf(db);
  return db.transaction(async (tx) => {
    await tx.execute(sql`select ${n.qualified('_feed_lock')}('', 'claim', true)`);
    if (origin !== null) {
      const existing = await queryRows<{ feed: string; origin: FeedOrigin | null }>(
        tx,
        sql`select feed, origin from ${n.feedCheckpoints} order by feed`,
      );
      const conflict = feedOriginConflict(existing, origin);
      if (conflict) return conflict;
    }
    if (feeds.length === 0) return null;
    // names of FEED_NAME_PATTERN need no quoting inside an array literal; anything else is refused
    const bad = feeds.find((feed) => !FEED_NAME_PATTERN.test(feed));
    if (bad !== undefined) throw new Error(`feed name ${JSON.stringify(bad)} does not match ${FEED_NAME_PATTERN}`);
    // one statement for every feed: the claim row is held for one round trip, not one per feed, so
    // replicas of a 500-feed deployment starting together wait milliseconds for it, not the lock timeout
    await tx.execute(
      sql`insert into ${n.feedCheckpoints} (feed, origin)
          select feed, ${origin}::text from unnest(${`{${feeds.join(',')}}`}::text[]) as given(feed)
          on conflict (feed) do update set origin = coalesce(${n.feedCheckpoints}.origin, excluded.origin)
          where ${n.feedCheckpoints}.origin is null and excluded.origin is not null`,
    );
    return null;
  });
}

/** The feeds of a database and their origin, by name. */
export async function listFeedOrigins(db: Db): Promise<Array<{ feed: string; origin: FeedOrigin | null }>> {
  return queryRows(db, sql`select feed, origin from ${namesOf(db).feedCheckpoints} order by feed`);
}
