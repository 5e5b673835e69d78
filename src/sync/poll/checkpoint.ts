import { namesOf, type StoreNames } from '../../db/store-names.js';
import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import { recordAudit } from '../../store-api/audit/audit-entries.js';

export interface Checkpoint {
  feed: string;
  /** where to read next; null = the beginning of the feed */
  iterator: string | null;
  /** fencing token: every page apply and every reset bumps it */
  version: number;
  updatedAt: Date;
  pagesApplied: number;
  eventsApplied: number;
  eventsQuarantined: number;
}

export interface CheckpointReset {
  feed: string;
  from: string | null;
  to: string | null;
  by: string;
  at: Date;
}

interface CheckpointRow extends Record<string, unknown> {
  feed: string;
  iterator: string | null;
  version: unknown;
  updated_at: unknown;
  pages_applied: unknown;
  events_applied: unknown;
  events_quarantined: unknown;
}

function toCheckpoint(row: CheckpointRow): Checkpoint {
  return {
    feed: row.feed,
    iterator: row.iterator,
    version: Number(row.version),
    updatedAt: new Date(row.updated_at as string | Date),
    pagesApplied: Number(row.pages_applied),
    eventsApplied: Number(row.events_applied),
    eventsQuarantined: Number(row.events_quarantined),
  };
}

const ensureRow = (n: StoreNames, feed: string) =>
  sql`insert into ${n.feedCheckpoints} (feed) values (${feed}::text) on conflict (feed) do nothing`;

const selectRow = (n: StoreNames, feed: string) =>
  sql`select feed, iterator, version, updated_at, pages_applied, events_applied, events_quarantined
      from ${n.feedCheckpoints} where feed = ${feed}::text`;

/**
 * The feed's checkpoint, created at version 0 (the beginning) on first use. One statement when the
 * row exists: the poller reads it at the start of every pass, caught-up polls included.
 */
export async function loadCheckpoint(db: Db, feed: string): Promise<Checkpoint> {
  const n = namesOf(db);
  let [row] = await queryRows<CheckpointRow>(db, selectRow(n, feed));
  if (!row) {
    await db.execute(ensureRow(n, feed));
    [row] = await queryRows<CheckpointRow>(db, selectRow(n, feed));
  }
  if (!row) throw new Error(`checkpoint of feed "${feed}" vanished right after it was ensured`);
  return toCheckpoint(row);
}

/**
 * Stamps the checkpoint's updated_at, leaving iterator and version as they are: a caught-up worker's
 * proof of life for the retention check (see checkpointNeedsTouch). No row changes when the version
 * moved meanwhile (a reset): the next read picks that up.
 */
export async function touchCheckpoint(db: Db, feed: string, expectedVersion: number): Promise<void> {
  await db.execute(
    sql`update ${namesOf(db).feedCheckpoints} set updated_at = now() where feed = ${feed}::text and version = ${expectedVersion}::bigint`,
  );
}

/**
 * Moves the feed's iterator (null = the beginning) and bumps the version so a
 * running worker's next compare-and-set fails and it reloads: a worker never
 * overwrites a reset. In the same transaction: the checkpoint_resets row and an audit row
 * (`checkpoint.reset`, detail: previous and new iterator, on behalf of `by`).
 */
export async function resetCheckpoint(
  db: Db,
  feed: string,
  options: { to: string | null; by: string },
): Promise<{ from: string | null; to: string | null; version: number }> {
  const n = namesOf(db);
  return db.transaction(async (tx) => {
    await tx.execute(ensureRow(n, feed));
    const [before] = await queryRows<{ iterator: string | null }>(
      tx,
      sql`select iterator from ${n.feedCheckpoints} where feed = ${feed}::text for update`,
    );
    const [after] = await queryRows<{ version: unknown }>(
      tx,
      sql`update ${n.feedCheckpoints} set iterator = ${options.to}::text, version = version + 1, updated_at = now()
          where feed = ${feed}::text returning version`,
    );
    await tx.execute(
      sql`insert into ${n.checkpointResets} (feed, from_iterator, to_iterator, reset_by)
          values (${feed}::text, ${before?.iterator ?? null}::text, ${options.to}::text, ${options.by}::text)`,
    );
    await recordAudit(
      tx,
      n,
      {
        action: 'checkpoint.reset',
        feed,
        subject: options.to,
        detail: { previous_iterator: before?.iterator ?? null, new_iterator: options.to, version: Number(after?.version) },
      },
      options.by,
    );
    return { from: before?.iterator ?? null, to: options.to, version: Number(after?.version) };
  });
}

/** The feed's latest reset, or null (the poller blames a refused iterator on it: see resetToBlame). */
export async function latestCheckpointReset(db: Db, feed: string): Promise<Omit<CheckpointReset, 'feed'> | null> {
  const [row] = await queryRows<{ from_iterator: string | null; to_iterator: string | null; reset_by: string; reset_at: unknown }>(
    db,
    sql`select from_iterator, to_iterator, reset_by, reset_at from ${namesOf(db).checkpointResets}
        where feed = ${feed}::text order by id desc limit 1`,
  );
  return row ? { from: row.from_iterator, to: row.to_iterator, by: row.reset_by, at: new Date(row.reset_at as string | Date) } : null;
}
