import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import { namesOf } from '../../db/store-names.js';
import { sourceLockShared } from '../version-migration/source-lock.js';
import type { OutboxKind, OutboxState, RowUpdate } from './decisions.js';

// The outbox's SQL, each statement its own short transaction: nothing is held open across an
// HTTP request.

/** A row at the head of its external_id, due now: without its body, read one row at a time (sendBody). */
export interface DueRow {
  id: number;
  externalId: string;
  kind: OutboxKind;
  /**
   * for a cancel: the latest send before it for the same external_id; `id` is the send's id as apps
   * read it (its number within the feed, outbox_status.id, 0032), since it goes into the cancel's last_error
   */
  previousSend: { id: number; state: OutboxState } | null;
}

/**
 * One feed's pending rows that are due and first in line for their external_id (rows of one
 * (feed, external_id) go in id order: nothing overtakes an earlier pending row, even one waiting
 * out its backoff).
 */
export async function dueRows(db: Db, feed: string, limit: number): Promise<DueRow[]> {
  const n = namesOf(db);
  const rows = await queryRows<Record<string, unknown>>(
    db,
    sql`select o.id, o.external_id, o.kind, s.feed_serial as send_id, s.state as send_state
        from ${n.outbox} o
        left join lateral (
          select s.feed_serial, s.state from ${n.outbox} s
          where o.kind = 'cancel' and s.feed = o.feed and s.external_id = o.external_id and s.kind = 'send' and s.id < o.id
          order by s.id desc limit 1
        ) s on true
        where o.feed = ${feed}::text and o.state = 'pending' and o.next_attempt_at <= now()
          and not exists (select 1 from ${n.outbox} e
                          where e.feed = o.feed and e.external_id = o.external_id and e.state = 'pending' and e.id < o.id)
        order by o.id
        limit ${limit}`,
  );
  return rows.map((r) => ({
    id: Number(r.id),
    externalId: r.external_id as string,
    kind: r.kind as OutboxKind,
    previousSend: r.send_id === null || r.send_id === undefined ? null : { id: Number(r.send_id), state: r.send_state as OutboxState },
  }));
}

/** A send's body, read for its one delivery: `tooLarge` (never loaded) when over MAX_API_BODY_BYTES. */
export type SendBody = { body: unknown; tooLarge: false } | { body: null; tooLarge: true; bytes: number };

/**
 * Reads ONE row's body, and only when it is within `maxBytes` (a row queued before
 * send_prescription had its cap is measured in the database and never loaded). The delivery loop
 * lists due rows without bodies, so the daemon holds at most one body per delivery lane (issue 25).
 */
export async function sendBody(db: Db, id: number, maxBytes: number): Promise<SendBody | null> {
  const n = namesOf(db);
  const [row] = await queryRows<{ bytes: number; body: unknown }>(
    db,
    sql`select octet_length(body::text) as bytes, case when octet_length(body::text) <= ${maxBytes}::int then body end as body
          from ${n.outbox} where id = ${id}`,
  );
  if (!row) return null;
  const bytes = Number(row.bytes);
  return bytes > maxBytes ? { body: null, tooLarge: true, bytes } : { body: row.body, tooLarge: false };
}

/** What a claim returns: the attempt number (the fence for settle) and whether an earlier attempt may have landed. */
export interface Claim {
  attempt: number;
  wasInDoubt: boolean;
  /** the base URL the request goes through (null: none recorded or configured: the default client) */
  sentThrough: string | null;
  /** the traceparent of the app's transaction that queued the row (0033), null when it set none */
  traceparent: string | null;
}

/**
 * Records an attempt BEFORE its request is sent, committed: a process killed mid-request leaves the
 * row in doubt, so the next leader looks the external_id up before sending again. Null when the
 * row is no longer pending.
 *
 * It also fixes the base URL the request goes through, read from the database (never a value the
 * worker was told at its last load of the sources): the feed's current source, else `configuredBaseUrl`.
 * A send keeps the URL of its first claim for every retry (an attempt in doubt is looked up where it
 * may have landed); a cancel goes through the current one. Two statements in one transaction: the
 * shared source lock first (source-lock.ts), then the claim, whose snapshot sees any migration start
 * the lock waited for.
 */
export async function claimAttempt(
  db: Db,
  id: number,
  feed: string,
  configuredBaseUrl: string | null = null,
  /** the delivery span's traceparent (tracing on): a page that applies the row's events links to it */
  deliveryTraceparent: string | null = null,
): Promise<Claim | null> {
  const n = namesOf(db);
  return db.transaction(async (tx) => {
    await tx.execute(sourceLockShared(n, feed));
    const [row] = await queryRows<{ attempts: number; was_in_doubt: boolean; sent_through: string | null; traceparent: string | null }>(
      tx,
      sql`update ${n.outbox} o set attempts = o.attempts + 1, in_doubt = true, last_attempt_at = now(), updated_at = now(),
            delivery_traceparent = coalesce(${deliveryTraceparent}::text, o.delivery_traceparent),
            sent_through = case when o.kind = 'send' and o.sent_through is not null then o.sent_through
              else coalesce((select s.base_url from ${n.feedSources} s where s.feed = o.feed and s.state = 'current'), ${configuredBaseUrl}::text) end
          from (select id, in_doubt from ${n.outbox} where id = ${id} and feed = ${feed}::text and state = 'pending' for update) before
          where o.id = before.id
          returning o.attempts, before.in_doubt as was_in_doubt, o.sent_through, o.traceparent`,
    );
    return row
      ? {
          attempt: Number(row.attempts),
          wasInDoubt: row.was_in_doubt,
          sentThrough: row.sent_through ?? null,
          traceparent: row.traceparent ?? null,
        }
      : null;
  });
}

/**
 * Writes an attempt's result, fenced by its attempt number: if another leader claimed the row
 * since (a lease lost unnoticed for a moment), its attempt is the one that counts. False then.
 */
export async function settleRow(db: Db, id: number, attempt: number, update: RowUpdate): Promise<boolean> {
  const n = namesOf(db);
  const finished = update.state !== 'pending';
  const rows = await queryRows(
    db,
    sql`update ${n.outbox} set state = ${update.state}, in_doubt = ${update.inDoubt}, last_error = ${update.lastError},
          response_status = ${update.responseStatus},
          next_attempt_at = case when ${update.retryInMs}::bigint is null then next_attempt_at
                                 else now() + ${update.retryInMs ?? 0}::bigint * interval '1 millisecond' end,
          completed_at = case when ${finished} then now() else null end,
          updated_at = now()
        where id = ${id} and state = 'pending' and attempts = ${attempt}
        returning 1`,
  );
  return rows.length > 0;
}

/** Fails a row without sending it (a cancel behind a failed send). */
export async function failUnsent(db: Db, id: number, reason: string): Promise<void> {
  const n = namesOf(db);
  await db.execute(
    sql`update ${n.outbox} set state = 'failed', in_doubt = false, last_error = ${reason}, completed_at = now(), updated_at = now()
        where id = ${id} and state = 'pending'`,
  );
}
