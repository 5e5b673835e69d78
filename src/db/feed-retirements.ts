import { sql } from 'drizzle-orm';
import type { Db } from './connection.js';
import { FEED_NAME_PATTERN } from './feed-name.js';
import { namesOf } from './store-names.js';

/**
 * Marks feeds a FEEDS_FILE reload removed as retired (feed_retirements, 0027): no replica runs them
 * any more, their data stays under retention. `feeds list` and feed_overview show it.
 */
export async function retireFeeds(db: Db, feeds: readonly string[]): Promise<void> {
  if (feeds.length === 0) return;
  const table = namesOf(db).qualified('feed_retirements');
  for (const feed of feeds) await db.execute(sql`insert into ${table} (feed) values (${feed}::text) on conflict (feed) do nothing`);
}

/** A start or reload names these feeds: they are not retired (any more). */
export async function unretireFeeds(db: Db, feeds: readonly string[]): Promise<void> {
  if (feeds.length === 0) return;
  // the names go into an array literal: only names of the feed-name rule (no quote, comma or brace)
  for (const feed of feeds)
    if (!FEED_NAME_PATTERN.test(feed)) throw new Error(`feed name ${JSON.stringify(feed)} is not a valid feed name`);
  const table = namesOf(db).qualified('feed_retirements');
  await db.execute(sql`delete from ${table} where feed = any(${`{${feeds.join(',')}}`}::text[])`);
}
