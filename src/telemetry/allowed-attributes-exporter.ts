import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { allowedAttributes } from './attributes.js';

/** The most events one exported span keeps (retries of one delivery are bounded well below). */
export const MAX_SPAN_EVENTS = 32;
/** The most links one exported span keeps (a page links the deliveries of its prescriptions). */
export const MAX_SPAN_LINKS = 64;

/**
 * Wraps the OTLP exporter so that what leaves the process is what the allow-list permits, whatever
 * instrumentation wrote: span, event and link attributes filtered (attributes.ts), the status
 * message dropped (an error message may quote input), events and links bounded. The span names are
 * fixed strings of this code base.
 */
export class AllowedAttributesExporter implements SpanExporter {
  constructor(private readonly inner: SpanExporter) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.inner.export(spans.map(allowedSpan), resultCallback);
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** A copy of `span` holding only allowed attributes, bounded events and links, and no status message. Pure. */
export function allowedSpan(span: ReadableSpan): ReadableSpan {
  const events = span.events.slice(0, MAX_SPAN_EVENTS).map((event) => ({ ...event, attributes: allowedAttributes(event.attributes) }));
  const links = span.links.slice(0, MAX_SPAN_LINKS).map((link) => ({ ...link, attributes: allowedAttributes(link.attributes) }));
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => span.spanContext(),
    parentSpanContext: span.parentSpanContext,
    startTime: span.startTime,
    endTime: span.endTime,
    status: { code: span.status.code },
    attributes: allowedAttributes(span.attributes),
    links,
    events,
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationScope: span.instrumentationScope,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount + Math.max(0, span.events.length - MAX_SPAN_EVENTS),
    droppedLinksCount: span.droppedLinksCount + Math.max(0, span.links.length - MAX_SPAN_LINKS),
  };
}
