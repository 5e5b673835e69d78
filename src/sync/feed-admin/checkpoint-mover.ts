import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import { namesOf } from '../../db/store-names.js';

/** The latest recorded move of a feed's checkpoint: who, from, to, when. Identifiers only. */
export interface CheckpointMove {
  /** checkpoint_resets.reset_by: the OS user@host of the CLI (or `resync by ...`) */
  by: string;
  from: string | null;
  to: string | null;
  at: Date;
  /** the database role of the audit row of that move, when the audit trail is readable to this role */
  actor?: string;
}

/**
 * The feed's latest checkpoint reset (checkpoint_resets, readable with the runtime grants) and, best
 * effort, the database role that made it from the audit trail (audit_log: a role without SELECT on it
 * gets the reset alone). undefined when the feed was never reset: another worker moved it.
 */
export async function latestCheckpointMove(db: Db, feed: string): Promise<CheckpointMove | undefined> {
  const n = namesOf(db);
  const [row] = await queryRows<{ reset_by: string; from_iterator: string | null; to_iterator: string | null; reset_at: unknown }>(
    db,
    sql`select reset_by, from_iterator, to_iterator, reset_at from ${n.checkpointResets}
        where feed = ${feed}::text order by id desc limit 1`,
  );
  if (!row) return undefined;
  const move: CheckpointMove = {
    by: row.reset_by,
    from: row.from_iterator,
    to: row.to_iterator,
    at: new Date(row.reset_at as string | Date),
  };
  try {
    const [audit] = await queryRows<{ actor: string }>(
      db,
      sql`select actor from ${n.qualified('audit_log')}
          where feed = ${feed}::text and action in ('checkpoint.reset', 'feed.resync', 'event.skip') order by id desc limit 1`,
    );
    if (audit) move.actor = audit.actor;
  } catch {
    // no SELECT on audit_log for this role (it is granted to auditors): the reset row says enough
  }
  return move;
}
