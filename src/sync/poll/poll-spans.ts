import { trace, context as otelContext, type SpanContext } from '@opentelemetry/api';
import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import { namesOf } from '../../db/store-names.js';
import { inSpan, linkTo, recordingSpan, setAttributes, SpanKind } from '../../telemetry/spans.js';
import type { AppliedPage, FetchedPage } from './poll-loop.js';

/** The most deliveries one page span links to (a page holds at most 250 events). */
const MAX_DELIVERY_LINKS = 64;

// the poll span that fetched each page (by its events array): the page's apply span is its child
const fetchedBy = new WeakMap<unknown[], SpanContext>();

/**
 * fetchPage inside a root span `intake_sync.poll` (the feed, the page size asked, what came back);
 * the client's `GET /events` span is its child. Tracing off: the API's no-op span.
 */
export function tracedFetch<R>(
  feed: string,
  pageLimit: number,
  fetch: (request: R, signal: AbortSignal) => Promise<FetchedPage>,
): (request: R, signal: AbortSignal) => Promise<FetchedPage> {
  return (request, signal) =>
    inSpan(
      'intake_sync.poll',
      { kind: SpanKind.INTERNAL, root: true, attributes: { 'intake_sync.feed': feed, 'intake_sync.page.limit': pageLimit } },
      async (span) => {
        const page = await fetch(request, signal);
        setAttributes(span, { 'intake_sync.page.events': page.events.length, 'intake_sync.page.done': page.meta.done });
        if (span.isRecording()) fetchedBy.set(page.events, span.spanContext());
        return page;
      },
    );
}

/**
 * applyPage inside a span `intake_sync.page apply`, child of the poll that fetched the page, with the
 * page's counts and the checkpoint version it committed; the page transaction carries its trace into
 * the status changes it writes (src/db/trace-context.ts), and the span links to the outbox deliveries
 * that sent the prescriptions whose status it changed.
 */
export function tracedApply<P extends { events: unknown[] }>(
  db: Db,
  feed: string,
  apply: (page: P) => Promise<AppliedPage>,
): (page: P) => Promise<AppliedPage> {
  return (page) => {
    const parent = fetchedBy.get(page.events);
    const base = parent ? trace.setSpanContext(otelContext.active(), parent) : otelContext.active();
    return otelContext.with(base, () =>
      inSpan(
        'intake_sync.page apply',
        {
          kind: SpanKind.INTERNAL,
          ...(parent ? {} : { root: true }),
          attributes: { 'intake_sync.feed': feed, 'db.system.name': 'postgresql', 'db.operation.name': 'apply page' },
        },
        async (span) => {
          const applied = await apply(page);
          const q = applied.quarantined;
          setAttributes(span, {
            'intake_sync.page.events': applied.received,
            'intake_sync.page.inserted': applied.inserted,
            'intake_sync.page.duplicates': applied.duplicates,
            'intake_sync.page.matched': applied.matched,
            'intake_sync.page.quarantined': q.malformed + q.unmatched + q.ambiguous + q.unsupported_version,
            'intake_sync.page.status_changes': applied.statusChanges,
            'intake_sync.checkpoint.version': applied.version,
          });
          if (applied.statusChanges > 0 && span.isRecording()) await linkDeliveries(db, feed, span.spanContext().traceId);
          return applied;
        },
      ),
    );
  };
}

/**
 * Links the active page span to the delivery spans of the prescriptions its transaction changed
 * (status_changes of its trace id, partial index status_changes_trace_id_idx). Best effort: a failed
 * read costs the links, never the page, which is committed already.
 */
async function linkDeliveries(db: Db, feed: string, traceId: string): Promise<void> {
  const span = recordingSpan();
  if (!span) return;
  const n = namesOf(db);
  try {
    const rows = await queryRows<{ delivery_traceparent: string }>(
      db,
      sql`select distinct o.delivery_traceparent from ${n.statusChanges} s
          join ${n.outbox} o on o.feed = s.feed and o.external_id = s.external_id and o.kind = 'send'
          where s.trace_id = ${traceId}::text and s.feed = ${feed}::text and o.delivery_traceparent is not null
          limit ${MAX_DELIVERY_LINKS}`,
    );
    for (const row of rows) {
      const link = linkTo(row.delivery_traceparent, 'delivery');
      if (link) span.addLink(link);
    }
  } catch {
    // the links are an aid to the reader: the page they would decorate is already committed
  }
}
