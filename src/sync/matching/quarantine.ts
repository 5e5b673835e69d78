import { namesOf } from '../../db/store-names.js';
import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';

export const QUARANTINE_REASONS = ['malformed', 'unmatched', 'ambiguous', 'unsupported_version'] as const;
export type QuarantineReason = (typeof QUARANTINE_REASONS)[number];

export interface QuarantineEntry {
  /** null when the malformed event had no usable id */
  event_id: string | null;
  quarantine_key: string;
  feed: string;
  reason: string;
  detail: string;
  first_seen_at: string;
  last_seen_at: string;
  seen_count: number;
  resolved_at: string | null;
  /** the body as received; only when asked for, because it can hold PHI */
  raw?: unknown;
}

export interface ListQuarantineOptions {
  /** only this feed's findings; every feed's when absent */
  feed?: string | undefined;
  reason?: QuarantineReason | undefined;
  /** include findings rematch has resolved */
  includeResolved?: boolean | undefined;
  includeRaw?: boolean | undefined;
}

const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string | Date).toISOString());

/** Quarantined events, oldest first; open ones only unless includeResolved. */
export async function listQuarantine(db: Db, options: ListQuarantineOptions = {}): Promise<QuarantineEntry[]> {
  const rows = await queryRows<Record<string, unknown>>(
    db,
    sql`select event_id, quarantine_key, feed, reason, detail, first_seen_at, last_seen_at, seen_count, resolved_at
        ${options.includeRaw ? sql`, raw` : sql``}
        from ${namesOf(db).quarantine}
        where (${options.reason ?? null}::text is null or reason = ${options.reason ?? null}::text)
          and (${options.feed ?? null}::text is null or feed = ${options.feed ?? null}::text)
          and (${options.includeResolved ?? false}::boolean or resolved_at is null)
        order by id`,
  );
  return rows.map((r) => ({
    event_id: r.event_id as string | null,
    quarantine_key: r.quarantine_key as string,
    feed: r.feed as string,
    reason: r.reason as string,
    detail: r.detail as string,
    first_seen_at: iso(r.first_seen_at) as string,
    last_seen_at: iso(r.last_seen_at) as string,
    seen_count: Number(r.seen_count),
    resolved_at: iso(r.resolved_at),
    ...(options.includeRaw ? { raw: r.raw } : {}),
  }));
}
