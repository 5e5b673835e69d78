import { FEED_NAME_PATTERN } from '../db/feed-name.js';
import type { FilterArguments, PagePosition } from '../store-api/triage/quarantine-page.js';
import { EVENT_NAME_PATTERN as EVENT_NAME, IDENTIFIER_PATTERN as IDENTIFIER } from '../store-api/triage/vocabulary.js';

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
/**
 * Reads the filter from query parameters; a value that breaks its rule is named in `problems`.
 * `reasons`: the finding reasons (findingReasons, src/store-api/triage/quarantine-page.ts). Pure.
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
 * The filter arguments of quarantine_page, quarantine_count and dismiss_matching, which share one
 * filter in SQL (_quarantine_filter), held_before as ISO text. Pure.
 */
export function filterArguments(filter: QuarantineFilter, held: string | null): FilterArguments {
  return {
    feed: filter.feed ?? null,
    reason: filter.reason ?? null,
    eventName: filter.eventName ?? null,
    heldBefore: held,
    search: filter.search ?? null,
  };
}

/** A page position: a row's (held_since, feed, quarantine_key). */
export type QuarantineCursor = PagePosition;

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
