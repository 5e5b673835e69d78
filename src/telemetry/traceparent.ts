/**
 * W3C Trace Context `traceparent` (https://www.w3.org/TR/trace-context/#traceparent-header), read
 * strictly: version 00, lower-case hex, 55 characters, neither id all zeros. Anything else is not a
 * trace context (the recommendation says to ignore it and start a new trace, never to fail).
 */
export const TRACEPARENT_PATTERN = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The longest traceparent accepted (version 00 is exactly this long). */
export const TRACEPARENT_LENGTH = 55;

/** A parsed traceparent: the trace and the parent span it names, and whether it was sampled. */
export interface TraceParent {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/** The trace context `text` names, or undefined when it is not a valid version-00 traceparent. Pure. */
export function parseTraceparent(text: unknown): TraceParent | undefined {
  if (typeof text !== 'string' || text.length !== TRACEPARENT_LENGTH) return undefined;
  const match = TRACEPARENT_PATTERN.exec(text);
  if (!match) return undefined;
  const [, traceId = '', spanId = '', flags = '00'] = match;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
}

/** The traceparent of a span context. Pure. */
export function formatTraceparent(context: { traceId: string; spanId: string; traceFlags: number }): string {
  return `00-${context.traceId}-${context.spanId}-${(context.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}
