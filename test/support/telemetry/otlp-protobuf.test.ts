import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { decodeTraceRequest } from './otlp-protobuf.js';
import { jsonSpans } from './otlp-receiver.js';

// The receiver's protobuf reader is ours (otlp-transformer 0.301 has no request decoder): it must read
// what the official encoder writes exactly as the official JSON encoding says it.
describe('the test receiver decodes OTLP as the official transformer encodes it', () => {
  it('protobuf and JSON of the same spans decode to the same spans', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'decoder-check' }),
      spanProcessors: [new SimpleSpanProcessor({ exporter })],
    });
    const tracer = provider.getTracer('decoder');
    const parent = tracer.startSpan('parent', { kind: SpanKind.CONSUMER, attributes: { s: 'text', i: 42, d: 1.5, b: true } });
    parent.addEvent('retry', { 'intake_sync.retry.delay_ms': 250 });
    parent.addLink({ context: { traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), traceFlags: 1 }, attributes: { kind: 'app' } });
    parent.setStatus({ code: SpanStatusCode.ERROR, message: 'm' });
    parent.end();
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    const fromProtobuf = decodeTraceRequest(ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array);
    const fromJson = jsonSpans(JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(spans) as Uint8Array).toString('utf8')));
    expect(fromProtobuf).toEqual(fromJson);
    expect(fromProtobuf[0]).toMatchObject({
      name: 'parent',
      kind: SpanKind.CONSUMER + 1, // OTLP's enum is the API's plus one (0 is unspecified)
      attributes: { s: 'text', i: 42, d: 1.5, b: true },
      events: [{ name: 'retry', attributes: { 'intake_sync.retry.delay_ms': 250 } }],
      links: [{ traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), attributes: { kind: 'app' } }],
      status: { code: 2, message: 'm' },
      resource: { 'service.name': 'decoder-check' },
    });
  });
});
