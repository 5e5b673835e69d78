import type { AttributeValue, Attributes } from '@opentelemetry/api';

/**
 * Every attribute key a span, span event or link of intake-sync may carry: semantic-convention keys
 * where one exists (HTTP client and server, database, messaging), `intake_sync.*` for counts and
 * identifiers of our own. Nothing outside this list is exported (allowed-attributes exporter), so a
 * patient field, an identity, a payload, a SQL parameter or a query string cannot reach a trace by
 * accident: each new key is a decision made here.
 */
export const ALLOWED_ATTRIBUTE_KEYS = [
  // HTTP client (GET /events, POST/DELETE /prescriptions) and server (the console), semconv 1.x stable
  'http.request.method',
  'http.response.status_code',
  'http.request.resend_count',
  'http.route',
  'url.full',
  'url.template',
  'url.scheme',
  'server.address',
  'server.port',
  'error.type',
  // the database (the page transaction)
  'db.system.name',
  'db.operation.name',
  // messaging: the outbox is a queue the leader delivers
  'messaging.system',
  'messaging.operation.type',
  'messaging.operation.name',
  'messaging.destination.name',
  'messaging.message.id',
  // ours: identifiers and counts only
  'intake_sync.feed',
  'intake_sync.page.limit',
  'intake_sync.page.events',
  'intake_sync.page.inserted',
  'intake_sync.page.duplicates',
  'intake_sync.page.matched',
  'intake_sync.page.quarantined',
  'intake_sync.page.status_changes',
  'intake_sync.page.done',
  'intake_sync.checkpoint.version',
  'intake_sync.outbox.kind',
  'intake_sync.outbox.attempt',
  'intake_sync.outbox.outcome',
  'intake_sync.retry.delay_ms',
  'intake_sync.retry.reason',
  'intake_sync.task',
  'intake_sync.task.outcome',
  // what a leader task did: counts only
  'intake_sync.retention.purged_rows',
  'intake_sync.statistics.tables_analyzed',
  'intake_sync.rematch.examined',
  'intake_sync.rematch.matched',
  'intake_sync.rematch.still_held',
  'intake_sync.command',
  'intake_sync.exit_code',
  'intake_sync.link.kind',
] as const;

export type AllowedAttributeKey = (typeof ALLOWED_ATTRIBUTE_KEYS)[number];

/** The spans named in our own namespace (the others are semantic-convention names: `GET /events`, `process outbox`). */
export const OWN_SPAN_NAMES = [
  'intake_sync.poll',
  'intake_sync.page apply',
  'intake_sync.leader retention',
  'intake_sync.leader statistics',
  'intake_sync.rematch',
] as const;

/** Attributes as instrumentation writes them: allowed keys only (checked by the compiler too). */
export type SafeAttributes = Partial<Record<AllowedAttributeKey, string | number | boolean | undefined>>;

const ALLOWED = new Set<string>(ALLOWED_ATTRIBUTE_KEYS);

/** The longest string value exported; identifiers and enums are far shorter. */
export const MAX_ATTRIBUTE_TEXT = 256;

/** Whether `key` may be exported. */
export function isAllowedAttribute(key: string): key is AllowedAttributeKey {
  return ALLOWED.has(key);
}

/**
 * `attributes` with every key off the list dropped and every value bounded: strings cut at
 * MAX_ATTRIBUTE_TEXT and stripped of control characters, numbers finite, arrays dropped (none is
 * allowed), URLs reduced to scheme, host, port and path (no user, query or fragment). Pure.
 */
export function allowedAttributes(attributes: Attributes | undefined): Attributes {
  const out: Attributes = {};
  if (!attributes) return out;
  for (const [key, value] of Object.entries(attributes)) {
    if (!ALLOWED.has(key)) continue;
    const bounded = boundedValue(key, value);
    if (bounded !== undefined) out[key] = bounded;
  }
  return out;
}

function boundedValue(key: string, value: AttributeValue | undefined): AttributeValue | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const text = key === 'url.full' ? urlWithoutQuery(value) : value;
  if (text === undefined) return undefined;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  return text.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, MAX_ATTRIBUTE_TEXT);
}

/** scheme://host[:port]/path of `text`, or undefined when it is not a URL. Pure. */
export function urlWithoutQuery(text: string): string | undefined {
  if (!URL.canParse(text)) return undefined;
  const url = new URL(text);
  return `${url.protocol}//${url.host}${url.pathname}`;
}
