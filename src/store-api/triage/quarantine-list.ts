import { qualified, type RunnerSource, runnerOf } from '../runner.js';
import type { QuarantineReason } from './vocabulary.js';

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
  /** how a closed finding closed: matched (rematch), resolved (triage), dismissed (triage), expired (retention) */
  resolution: string | null;
  /** the event's name; null for a malformed event (nothing was stored) */
  event_name: string | null;
  /** the event's subscription (triage groups by it); null for a malformed event */
  subscription_id: string | null;
  /** the body as received; only when asked for, because it can hold PHI */
  raw?: unknown;
}

export interface ListQuarantineOptions {
  /** only this feed's findings; every feed's when absent */
  feed?: string | undefined;
  reason?: QuarantineReason | undefined;
  /** include closed findings (matched, resolved, dismissed) */
  includeResolved?: boolean | undefined;
  includeRaw?: boolean | undefined;
}

const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string | Date).toISOString());

/** Quarantined events, oldest first; open ones only unless includeResolved. */
export async function listQuarantine(source: RunnerSource, options: ListQuarantineOptions = {}): Promise<QuarantineEntry[]> {
  const runner = runnerOf(source);
  const rows = await runner.query<Record<string, unknown>>(
    `select q.event_id, q.quarantine_key, q.feed, q.reason, q.detail, q.first_seen_at, q.last_seen_at, q.seen_count, q.resolved_at,
       q.resolution, e.name as event_name, e.subscription_id ${options.includeRaw ? ', q.raw' : ''}
     from ${qualified(runner, 'quarantine')} q
     left join ${qualified(runner, 'events')} e on e.feed = q.feed and e.id = q.event_id
     where ($1::text is null or q.reason = $1::text)
       and ($2::text is null or q.feed = $2::text)
       and ($3::boolean or q.resolved_at is null)
     order by q.id`,
    [options.reason ?? null, options.feed ?? null, options.includeResolved ?? false],
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
    resolution: (r.resolution as string | null) ?? null,
    event_name: (r.event_name as string | null) ?? null,
    subscription_id: (r.subscription_id as string | null) ?? null,
    ...(options.includeRaw ? { raw: r.raw } : {}),
  }));
}
