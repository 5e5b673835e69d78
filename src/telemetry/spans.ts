import { context, type Link, type Span, SpanKind, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api';
import { VERSION } from '../version.js';
import type { SafeAttributes } from './attributes.js';
import { formatTraceparent, parseTraceparent } from './traceparent.js';

export { SpanKind };
export type { Span };

/** The instrumentation scope every span of intake-sync is created in. */
export const TRACER_NAME = 'intake-sync';

/**
 * The tracer of the global provider: the no-op one unless OTEL_* switched tracing on (start.ts), so
 * every helper below costs a function call and a non-recording span when tracing is off.
 */
function tracer() {
  return trace.getTracer(TRACER_NAME, VERSION);
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: SafeAttributes;
  links?: Link[];
  /** a root span: no parent even when called inside another span (a poll pass, a delivery) */
  root?: boolean;
}

/**
 * Runs `body` inside a new active span named `name` and ends it when `body` settles: an error sets
 * the span's status to ERROR with `error.type` (the error's class name, never its message, which may
 * quote input) and is rethrown unchanged.
 */
export async function inSpan<T>(name: string, options: SpanOptions, body: (span: Span) => Promise<T>): Promise<T> {
  const { kind = SpanKind.INTERNAL, attributes, links, root } = options;
  return tracer().startActiveSpan(name, { kind, attributes: defined(attributes), links, root }, async (span) => {
    try {
      return await body(span);
    } catch (error) {
      markFailed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Starts a span the caller ends (for work whose end is not one awaited call). */
export function startSpan(name: string, options: SpanOptions): Span {
  const { kind = SpanKind.INTERNAL, attributes, links, root } = options;
  return tracer().startSpan(name, { kind, attributes: defined(attributes), links, root });
}

/** Runs `body` with `span` active (its children and log lines are in it). */
export function withActiveSpan<T>(span: Span, body: () => T): T {
  return context.with(trace.setSpan(context.active(), span), body);
}

/** Sets allow-listed attributes on `span` (undefined values skipped). */
export function setAttributes(span: Span, attributes: SafeAttributes): void {
  if (span.isRecording()) span.setAttributes(defined(attributes) ?? {});
}

/** Adds a span event (a retry, a backoff) with allow-listed attributes. */
export function addEvent(span: Span, name: string, attributes: SafeAttributes = {}): void {
  if (span.isRecording()) span.addEvent(name, defined(attributes));
}

/** Marks `span` failed: status ERROR and `error.type` = the error's class name, no message. */
export function markFailed(span: Span, error: unknown): void {
  if (!span.isRecording()) return;
  span.setAttribute('error.type', errorType(error));
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/**
 * The class name of `error`: its `name`, or its constructor's when a subclass left `name` at the
 * generic 'Error' (drizzle's DrizzleQueryError, which every failed query of the leader tasks is).
 */
export function errorType(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  return error.name === 'Error' ? error.constructor.name || 'Error' : error.name;
}

/** The active span, or undefined when none records (tracing off, or not sampled). */
export function recordingSpan(): Span | undefined {
  const span = trace.getActiveSpan();
  return span?.isRecording() ? span : undefined;
}

/** The traceparent of the active recording span; undefined when tracing is off or nothing records. */
export function activeTraceparent(): string | undefined {
  const span = recordingSpan();
  return span ? formatTraceparent(span.spanContext()) : undefined;
}

/** A link to the span `traceparent` names (an app's transaction, a delivery), or undefined when it is not valid. */
export function linkTo(traceparent: string | null | undefined, kind: string): Link | undefined {
  const parsed = parseTraceparent(traceparent);
  if (!parsed) return undefined;
  return {
    context: {
      traceId: parsed.traceId,
      spanId: parsed.spanId,
      traceFlags: parsed.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
      isRemote: true,
    },
    attributes: { 'intake_sync.link.kind': kind },
  };
}

/** The trace and span ids of the active recording span, for log lines; undefined when none. */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  const span = recordingSpan();
  if (!span) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

function defined(attributes: SafeAttributes | undefined): Record<string, string | number | boolean> | undefined {
  if (!attributes) return undefined;
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}
