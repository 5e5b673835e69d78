import { performance } from 'node:perf_hooks';
import { MAX_EVENT_BYTES, MAX_EVENT_ID_LENGTH, MAX_JSON_DEPTH } from '../../intake/limits.js';
import { isStorableText } from '../../intake/storable-text.js';
import { classifyEvent } from './classify-event.js';
import { digestOnlyJson, nestsDeeperThan, oversizedBytes, prunedCopy, sha256Hex } from './event-bounds.js';
import { pageRowsJson } from './page-rows-json.js';
import type { MalformedEvent, PreparedEvent, PreparedPage } from './prepared-page.js';

export type { MalformedEvent, PreparedEvent, PreparedPage } from './prepared-page.js';

// JSON.stringify escapes NUL and lone surrogates as \uXXXX; Postgres jsonb refuses both, which
// would fail the whole page forever. An even run of backslashes before means a literal "\u" text.
const UNSTORABLE_ESCAPE = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/i;

const UNSTORABLE_DETAIL = '(event): contains \\u0000 or an unpaired surrogate, which Postgres cannot store';

/** The event's id when it can key a row: a non-empty string, bounded, text Postgres stores as given. */
function usableId(raw: unknown): string | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const id = (raw as { id?: unknown }).id;
  return typeof id === 'string' && id.length > 0 && id.length <= MAX_EVENT_ID_LENGTH && isStorableText(id) ? id : null;
}

/**
 * A quarantine row for `raw`, keeping as much of the body as can be stored safely:
 * - storable JSON under MAX_EVENT_BYTES: the body itself (a non-object wrapped as `{"raw": ...}`);
 * - JSON with NUL or a lone surrogate: the body as JSON text, `{"raw_json": "..."}` (escapes become plain text);
 * - anything over MAX_EVENT_BYTES: its sha256 and byte size only (`digestOnlyJson`).
 */
function toMalformed(raw: unknown, json: string, detail: string, storable: boolean): MalformedEvent {
  const eventId = usableId(raw);
  const isObject = typeof raw === 'object' && raw !== null && !Array.isArray(raw);
  let rawJson = json;
  if (oversizedBytes(json) !== undefined) rawJson = digestOnlyJson(json, `larger than ${MAX_EVENT_BYTES} bytes`);
  // an unstorable body is kept as its JSON text, where the escapes are plain characters
  else if (!storable) rawJson = JSON.stringify({ raw_json: json });
  else if (!isObject) rawJson = `{"raw":${json}}`;
  const key = eventId ?? `sha256:${sha256Hex(json)}`;
  return { key, eventId, detail, rawJson };
}

/**
 * The JSON text of one raw event and, when it breaks a bound before it can even be classified, why.
 * Nesting is checked first: JSON.stringify recurses and would throw (or exhaust the stack) on it.
 */
function serialise(raw: unknown): { json: string; violation?: string } {
  if (nestsDeeperThan(raw)) {
    return { json: JSON.stringify(prunedCopy(raw)), violation: `(event): nested deeper than ${MAX_JSON_DEPTH} levels` };
  }
  // undefined (a hole, or a value JSON cannot carry) has no JSON text of its own
  const json = JSON.stringify(raw) ?? 'null';
  const bytes = oversizedBytes(json);
  if (bytes !== undefined) return { json, violation: `(event): ${bytes} bytes, larger than ${MAX_EVENT_BYTES}` };
  return { json };
}

/** Validates every raw event once, splits good from malformed and drops in-page repeats. */
export function preparePage(rawEvents: readonly unknown[]): PreparedPage {
  const started = performance.now();
  const events: PreparedEvent[] = [];
  const malformed: MalformedEvent[] = [];
  const seen = new Set<string>();
  let duplicatesInPage = 0;
  // occurredAt is normalised by toISOString() (years 0001-9999): the text order is the time order
  let newest: string | undefined;
  for (const raw of rawEvents) {
    const { json, violation } = serialise(raw);
    // the regex only where an escape can be: one native scan settles almost every event (a drain's hot path)
    const storable = !json.includes('\\u') || !UNSTORABLE_ESCAPE.test(json);
    if (violation !== undefined) {
      malformed.push(toMalformed(raw, json, violation, storable));
      continue;
    }
    const classified = classifyEvent(raw);
    if (!classified.ok) {
      malformed.push(toMalformed(raw, json, classified.detail, storable));
      continue;
    }
    if (!storable) {
      malformed.push(toMalformed(raw, json, UNSTORABLE_DETAIL, false));
      continue;
    }
    const { event } = classified;
    if (seen.has(event.id)) {
      duplicatesInPage++;
      continue;
    }
    seen.add(event.id);
    if (newest === undefined || classified.occurredAt > newest) newest = classified.occurredAt;
    events.push({
      id: event.id,
      name: event.name,
      occurredAt: classified.occurredAt,
      subscriptionId: event.subscription_id,
      apiVersion: event.api_version,
      key: classified.key,
      erx: classified.erx,
      rank: classified.rank,
      hold: classified.hold?.reason ?? null,
      holdDetail: classified.hold?.detail ?? null,
      rawJson: json,
    });
  }
  const rowsJson = pageRowsJson({ events, malformed });
  const newestOccurredAt = newest === undefined ? undefined : Date.parse(newest);
  return { events, malformed, duplicatesInPage, rowsJson, prepareMs: performance.now() - started, newestOccurredAt };
}
