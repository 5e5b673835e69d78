import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { AllowedAttributesExporter, MAX_SPAN_EVENTS } from '../../src/telemetry/allowed-attributes-exporter.js';

describe('AllowedAttributesExporter', () => {
  it('exports what the allow-list permits whatever instrumentation wrote: attributes, events, links, no status message', async () => {
    const inner = new InMemorySpanExporter();
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: new AllowedAttributesExporter(inner) })] });
    const span = provider.getTracer('t').startSpan('intake_sync.page apply', {
      kind: SpanKind.INTERNAL,
      attributes: { 'intake_sync.page.events': 3, 'patient.dob': '1925-03-12' },
    });
    for (let i = 0; i < MAX_SPAN_EVENTS + 5; i++)
      span.addEvent('retry', { 'intake_sync.retry.delay_ms': i, 'exception.message': 'Zqxcanary' });
    span.addLink({ context: { traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), traceFlags: 1 }, attributes: { email: 'z@example.com' } });
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'patient Zqxcanary not found' });
    span.end();
    await provider.forceFlush();
    const [exported] = inner.getFinishedSpans();
    expect(exported?.attributes).toEqual({ 'intake_sync.page.events': 3 });
    expect(exported?.events.length).toBeLessThanOrEqual(MAX_SPAN_EVENTS);
    expect(exported?.events.every((e) => Object.keys(e.attributes ?? {}).join() === 'intake_sync.retry.delay_ms')).toBe(true);
    expect(exported?.links.map((l) => l.attributes)).toEqual([{}]);
    expect(exported?.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(JSON.stringify(inner.getFinishedSpans().map((s) => [s.attributes, s.events, s.links, s.status]))).not.toMatch(
      /Zqxcanary|1925|example\.com/,
    );
  });
});
