import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import { recordAudit } from '../audit/audit-entries.js';
import { namesOf } from '../../db/store-names.js';

/** The one event `events skip` passes, as the operator's stream showed it (never its content). */
export interface SkippedEvent {
  /** the event's id when usable, else `sha256:<hex>` (stored keyed with the database's secret: _finding_key) */
  key: string;
  eventId: string | null;
  sha256: string;
  bytes: number;
}

export interface SkipEventInput {
  feed: string;
  /** the position the feed is stopped at (null: the beginning); the skip applies only while it still is */
  at: string | null;
  /** where the feed continues after that one event (the page's meta.iterator at limit=1) */
  next: string;
  event: SkippedEvent;
  /** `user@host`, for checkpoint_resets */
  by: string;
  capBytes: number;
}

/**
 * Moves the feed's checkpoint past exactly one event, in one transaction: compare-and-set on the
 * position (`at`), the event quarantined `malformed` by fingerprint (its body is what could not be
 * read), a checkpoint_resets row and the audit row `event.skip`. Returns the new version and the
 * finding's stored key, or null when the checkpoint is no longer at `at` (nothing written). A running worker sees the version move and
 * consumes again.
 */
export async function skipEvent(db: Db, input: SkipEventInput): Promise<{ version: number; key: string } | null> {
  const n = namesOf(db);
  const { event } = input;
  return db.transaction(async (tx) => {
    const [moved] = await queryRows<{ version: unknown }>(
      tx,
      sql`update ${n.feedCheckpoints} set iterator = ${input.next}::text, version = version + 1, updated_at = now(),
            events_quarantined = events_quarantined + 1
          where feed = ${input.feed}::text and iterator is not distinct from ${input.at}::text
          returning version`,
    );
    if (!moved) return null;
    const detail = `(event): larger than MAX_RESPONSE_BYTES (${input.capBytes}); skipped by \`intake-sync events skip\``;
    const raw = JSON.stringify({ omitted: 'larger than MAX_RESPONSE_BYTES: skipped', sha256: event.sha256, bytes: event.bytes });
    // without a usable id the key is the body's digest keyed with the database's secret (issue 33 §5)
    const [stored] = await queryRows<{ key: string }>(
      tx,
      sql`insert into ${n.quarantine} as q (quarantine_key, event_id, feed, reason, detail, raw)
          values (case when ${event.eventId}::text is null then ${n.qualified('_finding_key')}(${event.key}::text) else ${event.key}::text end,
            ${event.eventId}::text, ${input.feed}::text, 'malformed', ${detail}::text, ${raw}::jsonb)
          on conflict (feed, quarantine_key) do update set last_seen_at = now(), seen_count = q.seen_count + 1
          returning q.quarantine_key as key`,
    );
    const key = stored?.key ?? event.key;
    await tx.execute(
      sql`insert into ${n.checkpointResets} (feed, from_iterator, to_iterator, reset_by)
          values (${input.feed}::text, ${input.at}::text, ${input.next}::text, ${input.by}::text)`,
    );
    await recordAudit(tx, n, {
      action: 'event.skip',
      feed: input.feed,
      subject: key,
      // no digest of the body: apps read the audit trail, and a digest confirms a guessed body
      detail: { at: input.at, next: input.next, event_id: event.eventId, bytes: event.bytes },
    });
    return { version: Number(moved.version), key };
  });
}
