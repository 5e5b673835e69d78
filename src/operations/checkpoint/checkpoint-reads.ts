import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import { namesOf } from '../../db/store-names.js';
import type { CheckpointReset } from '../../sync/poll/checkpoint.js';

// What `checkpoint show`, `checkpoint history` and `checkpoint reset --dry-run` read of a feed's
// position and its moves; the worker reads and moves it in src/sync/poll/checkpoint.ts.

/** The feed's position without creating its row (a dry run writes nothing): the beginning when it has none. */
export async function peekCheckpoint(db: Db, feed: string): Promise<{ iterator: string | null; version: number }> {
  const [row] = await queryRows<{ iterator: string | null; version: unknown }>(
    db,
    sql`select iterator, version from ${namesOf(db).feedCheckpoints} where feed = ${feed}::text`,
  );
  return row ? { iterator: row.iterator, version: Number(row.version) } : { iterator: null, version: 0 };
}

/** The feed's reset audit trail, oldest first. */
export async function listCheckpointResets(db: Db, feed: string): Promise<CheckpointReset[]> {
  const rows = await queryRows<{
    feed: string;
    from_iterator: string | null;
    to_iterator: string | null;
    reset_by: string;
    reset_at: unknown;
  }>(
    db,
    sql`select feed, from_iterator, to_iterator, reset_by, reset_at from ${namesOf(db).checkpointResets} where feed = ${feed}::text order by id`,
  );
  return rows.map((r) => ({
    feed: r.feed,
    from: r.from_iterator,
    to: r.to_iterator,
    by: r.reset_by,
    at: new Date(r.reset_at as string | Date),
  }));
}
