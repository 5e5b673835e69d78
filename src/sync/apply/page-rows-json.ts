import type { MalformedEvent, PageRowsJson, PreparedEvent, PreparedPage } from './prepared-page.js';

export type { PageRowsJson } from './prepared-page.js';

function eventRowJson(event: PreparedEvent): string {
  const head = JSON.stringify({
    id: event.id,
    name: event.name,
    occurred_at: event.occurredAt,
    subscription_id: event.subscriptionId,
    api_version: event.apiVersion,
    identity_key: event.key,
    erx_message_id: event.erx,
    status_rank: event.rank,
    hold: event.hold,
    hold_detail: event.holdDetail,
  });
  // the body's JSON text spliced in, not stringified again; its payload travels inside it only
  return `${head.slice(0, -1)},"raw":${event.rawJson}}`;
}

function malformedRowJson(m: MalformedEvent): string {
  const head = JSON.stringify({ key: m.key, event_id: m.eventId, detail: m.detail });
  return `${head.slice(0, -1)},"raw":${m.rawJson}}`;
}

/** Serialises the page's rows once; preparePage() does it while the previous page commits. */
export function pageRowsJson(page: Pick<PreparedPage, 'events' | 'malformed'>): PageRowsJson {
  return {
    events: `[${page.events.map(eventRowJson).join(',')}]`,
    malformed: `[${page.malformed.map(malformedRowJson).join(',')}]`,
  };
}
