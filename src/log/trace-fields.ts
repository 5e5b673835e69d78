import { trace } from '@opentelemetry/api';

/**
 * `trace_id` and `span_id` of the span a log line is written in, so a line leads to its trace (and
 * a trace to its lines); nothing when no span records (tracing off: the API's no-op context holds none).
 */
export function traceFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
