import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { classifyEvent, MAX_EVENT_ID_LENGTH } from './classify-event.js';
import { pageRowsJson } from './page-rows-json.js';
import type { MalformedEvent, PreparedEvent, PreparedPage } from './prepared-page.js';

export type { MalformedEvent, PreparedEvent, PreparedPage } from './prepared-page.js';

// JSON.stringify escapes NUL and lone surrogates as \uXXXX; Postgres jsonb refuses both, which
// would fail the whole page forever. An even run of backslashes before means a literal "\u" text.
const UNSTORABLE_ESCAPE = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/i;

function usableId(raw: unknown): string | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const id = (raw as { id?: unknown }).id;
  return typeof id === 'string' && id.length > 0 && id.length <= MAX_EVENT_ID_LENGTH ? id : null;
}

function toMalformed(raw: unknown, json: string, detail: string, storable: boolean): MalformedEvent {
  const eventId = usableId(raw);
  const isObject = typeof raw === 'object' && raw !== null && !Array.isArray(raw);
  let rawJson = json;
  // an unstorable body is kept as its JSON text, where the escapes are plain characters
  if (!storable) rawJson = JSON.stringify({ raw_json: json });
  else if (!isObject) rawJson = `{"raw":${json}}`;
  const key = eventId ?? `sha256:${createHash('sha256').update(json).digest('hex')}`;
  return { key, eventId, detail, rawJson };
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
    // undefined (a hole, or a value JSON cannot carry) has no JSON text of its own
    const json = JSON.stringify(raw) ?? 'null';
    const storable = !UNSTORABLE_ESCAPE.test(json);
    const classified = classifyEvent(raw);
    if (!classified.ok) {
      malformed.push(toMalformed(raw, json, classified.detail, storable));
      continue;
    }
    if (!storable) {
      malformed.push(toMalformed(raw, json, '(event): contains \\u0000 or an unpaired surrogate, which Postgres cannot store', false));
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
      payloadJson: JSON.stringify(event.payload) ?? 'null',
    });
  }
  const rowsJson = pageRowsJson({ events, malformed });
  const newestOccurredAt = newest === undefined ? undefined : Date.parse(newest);
  return { events, malformed, duplicatesInPage, rowsJson, prepareMs: performance.now() - started, newestOccurredAt };
}
