/** The quarantine list's filter, as the query string gives it and after checking. */
export interface QuarantineFilter {
  feed?: string | undefined;
  reason?: string | undefined;
  eventName?: string | undefined;
  /** only findings held at least this long */
  age?: keyof typeof AGES | undefined;
  /** an event id, a subscription id or a prescription's external_id */
  search?: string | undefined;
}

/** The age choices of the filter, in milliseconds. */
export const AGES = { '1h': 3_600_000, '1d': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const;
export const REASONS = ['unmatched', 'ambiguous', 'malformed'] as const;
/** The dismissal codes the console offers (dismiss_quarantined takes any code of its rule). */
export const DISMISS_REASONS = ['not_ours', 'operator_test', 'reported_to_operator', 'duplicate'] as const;

const IDENTIFIER = /^[\x21-\x7e]{1,512}$/;
const FEED = /^[a-z0-9_-]{1,64}$/;
const EVENT_NAME = /^[a-z0-9_.-]{1,64}$/i;

/** Reads the filter from query parameters; a value that breaks its rule is named in `problems`. Pure. */
export function parseQuarantineFilter(query: Record<string, string | undefined>): { filter: QuarantineFilter; problems: string[] } {
  const problems: string[] = [];
  const filter: QuarantineFilter = {};
  const feed = query.feed?.trim();
  if (feed) FEED.test(feed) ? (filter.feed = feed) : problems.push('Feed: not a feed name');
  const reason = query.reason?.trim();
  if (reason) (REASONS as readonly string[]).includes(reason) ? (filter.reason = reason) : problems.push('Reason: not a finding reason');
  const eventName = query.event_name?.trim();
  if (eventName) EVENT_NAME.test(eventName) ? (filter.eventName = eventName) : problems.push('Event name: 1-64 of a-z 0-9 _ . -');
  const age = query.age?.trim();
  if (age) age in AGES ? (filter.age = age as keyof typeof AGES) : problems.push('Age: not one of the choices');
  const search = query.q?.trim();
  if (search) IDENTIFIER.test(search) ? (filter.search = search) : problems.push('Search: an identifier of 1-512 visible characters');
  return { filter, problems };
}

/** The filter as query parameters (links, hidden fields), the inverse of parseQuarantineFilter. Pure. */
export function filterParams(filter: QuarantineFilter): Record<string, string | undefined> {
  return { feed: filter.feed, reason: filter.reason, event_name: filter.eventName, age: filter.age, q: filter.search };
}

/** A page position: the last row's (held_since, feed, quarantine_key). */
export interface QuarantineCursor {
  heldSince: string;
  feed: string;
  key: string;
}

/** The opaque `after` parameter of a position. Pure. */
export function encodeCursor(cursor: QuarantineCursor): string {
  return Buffer.from(JSON.stringify([cursor.heldSince, cursor.feed, cursor.key])).toString('base64url');
}

/** The position an `after` parameter names, or undefined when it is not one. Pure. */
export function decodeCursor(text: string | undefined): QuarantineCursor | undefined {
  if (!text || text.length > 2048) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 3 || !value.every((v) => typeof v === 'string')) return undefined;
    const [heldSince, feed, key] = value as [string, string, string];
    if (Number.isNaN(Date.parse(heldSince)) || !FEED.test(feed) || !IDENTIFIER.test(key)) return undefined;
    return { heldSince, feed, key };
  } catch {
    return undefined;
  }
}

/**
 * The WHERE clause and parameters of a filter over quarantine_open (aliased q), from parameter
 * number `first`; `schema` comes quoted (context.ts schemaOf). Every value is a bound parameter. Pure.
 */
export function filterClause(filter: QuarantineFilter, schema: string, now: Date, first = 1): { where: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${first + params.length - 1}`;
  };
  if (filter.feed) parts.push(`q.feed = ${param(filter.feed)}`);
  if (filter.reason) parts.push(`q.reason = ${param(filter.reason)}`);
  if (filter.eventName) parts.push(`q.event_name = ${param(filter.eventName)}`);
  if (filter.age) parts.push(`q.held_since <= ${param(new Date(now.getTime() - AGES[filter.age]).toISOString())}::timestamptz`);
  if (filter.search) {
    const p = param(filter.search);
    // an event id, a subscription id, or the external_id of a prescription whose subscription it is
    parts.push(
      `(q.event_id = ${p} or q.subscription_id = ${p} or q.subscription_id in ` +
        `(select s.subscription_id from ${schema}.prescription_status s where s.external_id = ${p} and s.subscription_id is not null))`,
    );
  }
  return { where: parts.length === 0 ? 'true' : parts.join(' and '), params };
}
