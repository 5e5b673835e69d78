import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestSpans } from '../../src/console/request-span.js';
import type { Telemetry } from '../../src/telemetry/start.js';
import type { OtlpReceiver } from '../support/telemetry/otlp-receiver.js';
import { tracingTo } from '../support/telemetry/traced-world.js';

// Issue 38 §2: each console request is an HTTP server span named by its route template, child of the
// proxy's traceparent; the path's values and the query never reach the trace.

let receiver: OtlpReceiver;
let telemetry: Telemetry;

beforeAll(async () => {
  ({ receiver, telemetry } = await tracingTo('http/json'));
});
afterAll(async () => {
  await telemetry.shutdown();
  await receiver.close();
});

describe('requestSpans', () => {
  it('one server span per request, named by the route, the status recorded, no value of the path or query', async () => {
    const app = new Hono();
    app.use('*', requestSpans());
    app.get('/prescriptions/:external_id', (c) => c.text('ok'));
    app.post('/findings/:key/dismiss', (c) => c.text('broken', 500));
    const parent = `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01`;
    expect((await app.request('/prescriptions/rx-Zqxcanary-7?q=Vykcanary', { headers: { traceparent: parent } })).status).toBe(200);
    expect((await app.request('/findings/sha256:abc/dismiss', { method: 'POST' })).status).toBe(500);
    await telemetry.flush();
    const spans = receiver.spans();
    expect(spans.map((s) => [s.name, s.kind, s.attributes['http.route'], s.attributes['http.response.status_code']])).toEqual([
      ['GET /prescriptions/:external_id', 2, '/prescriptions/:external_id', 200],
      ['POST /findings/:key/dismiss', 2, '/findings/:key/dismiss', 500],
    ]);
    expect([spans[0]?.traceId, spans[0]?.parentSpanId]).toEqual(['ab'.repeat(16), 'cd'.repeat(8)]);
    expect(spans[1]?.attributes['error.type']).toBe('500');
    expect(receiver.bodies().some((b) => b.includes('Zqxcanary') || b.includes('Vykcanary') || b.includes('sha256:abc'))).toBe(false);
  });
});
