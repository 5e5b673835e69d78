import type postgres from 'postgres';
import { FEED_NAME_PATTERN } from '../db/feed-name.js';

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
/** The dismissal codes the console offers (dismiss_quarantined and dismiss_matching take any code of the rule). */
export const DISMISS_REASONS = ['not_ours', 'operator_test', 'reported_to_operator', 'duplicate'] as const;

const IDENTIFIER = /^[\x21-\x7e]{1,512}$/;
const EVENT_NAME = /^[a-z0-9_.-]{1,64}$/i;

/**
 * The finding reasons, as the SQL that owns them lists them (quarantine_reasons(),
 * sql/api/triage/quarantine_reasons.sql): the console keeps no copy of its own.
 */
export async function findingReasons(sql: postgres.Sql, schema: string): Promise<string[]> {
  // one row each (a user's connection does not fetch array types, so a text[] would come back as its text)
  const rows = await sql.unsafe<{ reason: string }[]>(
    `select r.reason from unnest(${schema}.quarantine_reasons()) with ordinality as r(reason, n) order by r.n`,
  );
  return rows.map((r) => r.reason);
}

/**
 * Reads the filter from query parameters; a value that breaks its rule is named in `problems`.
 * `reasons`: the finding reasons (findingReasons). Pure.
 */
export function parseQuarantineFilter(
  query: Record<string, string | undefined>,
  reasons: readonly string[],
): { filter: QuarantineFilter; problems: string[] } {
  const problems: string[] = [];
  const filter: QuarantineFilter = {};
  const feed = query.feed?.trim();
  if (feed) FEED_NAME_PATTERN.test(feed) ? (filter.feed = feed) : problems.push('Feed: not a feed name');
  const reason = query.reason?.trim();
  if (reason) reasons.includes(reason) ? (filter.reason = reason) : problems.push(`Finding reason: one of ${reasons.join(', ')}`);
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

/** The filter in words, for the page that acts on it. Pure. */
export function describeFilter(filter: QuarantineFilter): string {
  const parts = [
    filter.feed && `feed ${filter.feed}`,
    filter.reason && `finding reason ${filter.reason}`,
    filter.eventName && `event name ${filter.eventName}`,
    filter.age && `held at least ${filter.age}`,
    filter.search && `search ${filter.search}`,
  ].filter((p): p is string => typeof p === 'string');
  return parts.length === 0 ? 'every open finding your role can see' : parts.join(', ');
}

/** The instant an age choice starts from, as ISO text (null: no age). Pure. */
export function heldBefore(filter: QuarantineFilter, now: number): string | null {
  return filter.age ? new Date(now - AGES[filter.age]).toISOString() : null;
}

/**
 * The first five arguments of quarantine_page, quarantine_count and dismiss_matching, which share one
 * filter in SQL (_quarantine_filter): feed, finding reason, event name, held_before (ISO text), search.
 * Pure.
 */
export function filterArguments(filter: QuarantineFilter, held: string | null): (string | null)[] {
  return [filter.feed ?? null, filter.reason ?? null, filter.eventName ?? null, held, filter.search ?? null];
}

/** A page position: a row's (held_since, feed, quarantine_key). */
export interface QuarantineCursor {
  heldSince: string;
  feed: string;
  key: string;
}

/** The opaque `after` / `before` parameter of a position. Pure. */
export function encodeCursor(cursor: QuarantineCursor): string {
  return Buffer.from(JSON.stringify([cursor.heldSince, cursor.feed, cursor.key])).toString('base64url');
}

/** The position an `after` or `before` parameter names, or undefined when it is not one. Pure. */
export function decodeCursor(text: string | undefined): QuarantineCursor | undefined {
  if (!text || text.length > 2048) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 3 || !value.every((v) => typeof v === 'string')) return undefined;
    const [heldSince, feed, key] = value as [string, string, string];
    if (Number.isNaN(Date.parse(heldSince)) || !FEED_NAME_PATTERN.test(feed) || !IDENTIFIER.test(key)) return undefined;
    return { heldSince, feed, key };
  } catch {
    return undefined;
  }
}
