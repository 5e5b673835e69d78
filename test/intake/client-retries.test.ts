import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NetworkError, RequestTimeoutError, ResponseSchemaError, UpstreamError } from '../../src/intake/errors/index.js';
import { ManualClock } from '../../src/sandbox/clock.js';
import { identityOf, samplePrescription } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { startForwardingProxy, type ForwardingProxy } from '../support/intake/forwarding-proxy.js';
import { waitFor } from '../support/wait-for.js';
import { observedClient } from '../support/intake/test-client.js';

let sandbox: Sandbox;
let proxy: ForwardingProxy;

beforeAll(async () => {
  sandbox = await startSandbox({ clock: new ManualClock() });
  proxy = await startForwardingProxy(sandbox.baseUrl);
});
afterEach(() => {
  sandbox.setFaults({ errorRate: 0, rateLimitRate: 0, dropRate: 0, hangRate: 0, truncatedRate: 0, wrongShapeRate: 0 });
});
afterAll(async () => {
  await proxy?.close();
  await sandbox?.close();
});

const credential = () => sandbox.credentials[0] ?? { key: '', secret: '' };
const healAfter = (retries: number) => (info: { attempt: number }) => {
  if (info.attempt === retries) sandbox.setFaults({ errorRate: 0, rateLimitRate: 0, dropRate: 0, truncatedRate: 0, wrongShapeRate: 0 });
};

describe('retries over real sockets', () => {
  it('retries 500/502/503 with full-jitter backoff until the operator recovers', async () => {
    sandbox.setFaults({ errorRate: 1, retryAfterSeconds: 0, seed: 7 });
    const { client, retries, sleeps } = observedClient(sandbox.baseUrl, credential(), { onRetry: healAfter(3) });
    const page = await client.listEvents();
    expect(page.meta.done).toBe(true);
    expect(retries.map((r) => r.attempt)).toEqual([1, 2, 3]);
    for (const retry of retries) {
      expect(retry).toMatchObject({ method: 'GET', path: '/events' });
      expect(retry.error).toBeInstanceOf(UpstreamError);
      expect([500, 502, 503]).toContain((retry.error as UpstreamError).status);
    }
    // random 0.5, base 20: 10, 20, 40 (a 503's Retry-After of 0 adds only jitter)
    expect(sleeps.every((ms) => ms <= 40)).toBe(true);
  });

  it('gives up after the configured retries with the last UpstreamError', async () => {
    sandbox.setFaults({ errorRate: 1 });
    const { client, retries } = observedClient(proxy.baseUrl, credential(), { retry: { retries: 2, baseMs: 1, capMs: 1 } });
    const before = proxy.count('GET', '/events');
    await expect(client.listEvents()).rejects.toBeInstanceOf(UpstreamError);
    expect(retries).toHaveLength(2);
    expect(proxy.count('GET', '/events') - before).toBe(3);
  });

  it('429: waits at least Retry-After (observed sleep)', async () => {
    sandbox.setFaults({ rateLimitRate: 1, retryAfterSeconds: 3 });
    const { client, retries, sleeps } = observedClient(sandbox.baseUrl, credential(), { onRetry: healAfter(1) });
    await client.listEvents();
    expect((retries[0]!.error as UpstreamError).status).toBe(429);
    expect((retries[0]!.error as UpstreamError).retryAfterMs).toBe(3_000);
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThanOrEqual(3_000);
    expect(sleeps[0]).toBeLessThan(3_000 + 20);
  });

  it('429: the real default sleep waits at least Retry-After', async () => {
    sandbox.setFaults({ rateLimitRate: 1, retryAfterSeconds: 1 });
    const { client } = observedClient(sandbox.baseUrl, credential(), {
      sleep: undefined,
      onRetry: healAfter(1),
    });
    const started = performance.now();
    await client.listEvents();
    // timers may fire a millisecond early; never a whole Retry-After early
    expect(performance.now() - started).toBeGreaterThanOrEqual(990);
  });

  it('fails fast when Retry-After would overrun the elapsed budget', async () => {
    sandbox.setFaults({ rateLimitRate: 1, retryAfterSeconds: 120 });
    const { client, sleeps } = observedClient(sandbox.baseUrl, credential(), { retry: { maxElapsedMs: 60_000 } });
    const error = await client.listEvents().catch((e: unknown) => e);
    expect((error as UpstreamError).retryAfterMs).toBe(120_000);
    expect(sleeps).toEqual([]);
  });

  it('hang: RequestTimeoutError after bounded attempts', async () => {
    sandbox.setFaults({ hangRate: 1 });
    const { client, retries } = observedClient(sandbox.baseUrl, credential(), { timeoutMs: 100, retry: { retries: 2 } });
    // the server never answers: that the call ends at all shows each attempt's timeout
    const error = await client.getEvent('ev_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect((error as Error).message).toBe('GET /events/ev_1: no complete response within 100 ms');
    expect(retries.map((r) => r.error.name)).toEqual(['RequestTimeoutError', 'RequestTimeoutError']);
  });

  it('dropped connection: NetworkError, retried', async () => {
    sandbox.setFaults({ dropRate: 1 });
    const { client, retries } = observedClient(sandbox.baseUrl, credential(), { onRetry: healAfter(2) });
    await client.listEvents({ limit: 10 });
    expect(retries.map((r) => r.error.name)).toEqual(['NetworkError', 'NetworkError']);
    expect((retries[0]!.error as NetworkError).code).toEqual(expect.any(String));
  });

  it.each([
    ['truncated', { truncatedRate: 1 }],
    ['wrong-shape', { wrongShapeRate: 1 }],
  ])('%s events body: retried as a torn response', async (_label, faults) => {
    sandbox.setFaults(faults);
    const { client, retries } = observedClient(sandbox.baseUrl, credential(), { onRetry: healAfter(2) });
    const page = await client.listEvents();
    expect(page.meta.done).toBe(true);
    expect(retries.map((r) => r.error.name)).toEqual(['ResponseSchemaError', 'ResponseSchemaError']);
  });

  it('a persistently torn events body ends in ResponseSchemaError naming the path', async () => {
    sandbox.setFaults({ truncatedRate: 1 });
    const { client, retries } = observedClient(sandbox.baseUrl, credential(), { retry: { retries: 2 } });
    const error = await client.listEvents().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseSchemaError);
    expect((error as ResponseSchemaError).issues).toEqual([{ path: '(body)', message: 'is not JSON' }]);
    expect(retries).toHaveLength(2);
  });

  it('POST /subscriptions is not retried after a 5xx (it may have landed)', async () => {
    sandbox.setFaults({ errorRate: 1 });
    const { client, retries } = observedClient(proxy.baseUrl, credential());
    const before = proxy.count('POST', '/subscriptions');
    const identity = identityOf(samplePrescription(1, { prefix: 'retries' }));
    await expect(client.createSubscription({ prescription_identity: identity })).rejects.toBeInstanceOf(UpstreamError);
    expect(proxy.count('POST', '/subscriptions') - before).toBe(1);
    expect(retries).toEqual([]);
  });

  it('POST /subscriptions is retried after a 429 (refused before processing)', async () => {
    sandbox.setFaults({ rateLimitRate: 1, retryAfterSeconds: 0 });
    const { client, retries } = observedClient(sandbox.baseUrl, credential(), { onRetry: healAfter(1) });
    const identity = identityOf(samplePrescription(2, { prefix: 'retries' }));
    const created = await client.createSubscription({ prescription_identity: identity });
    expect(created.id).toEqual(expect.any(String));
    expect(retries).toHaveLength(1);
  });

  it('POST /subscriptions is retried when the connection is refused', async () => {
    const closed = await startSandbox();
    const url = closed.baseUrl;
    await closed.close();
    const { client, retries } = observedClient(url, credential(), { retry: { retries: 2 } });
    const error = await client.createSubscription({ prescription_identity: identityOf(samplePrescription(3)) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).code).toBe('ECONNREFUSED');
    expect(retries).toHaveLength(2);
  });

  it('logs each retry at warn with identifiers only (no secret, no token, no body)', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
    sandbox.setFaults({ errorRate: 1, seed: 3 });
    const { client } = observedClient(sandbox.baseUrl, credential(), { logger, onRetry: healAfter(1) });
    await client.createPrescription(samplePrescription(9, { prefix: 'retries' }));
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
    expect(entry).toMatchObject({ level: 40, method: 'POST', path: '/prescriptions', errorName: 'UpstreamError', attempt: 1 });
    expect(entry.delayMs).toEqual(expect.any(Number));
    const token = Buffer.from(`${credential().key}:${credential().secret}`).toString('base64');
    expect(lines[0]).not.toContain(credential().secret);
    expect(lines[0]).not.toContain(token);
    expect(lines[0]).not.toContain(samplePrescription(9).patient.last_name);
  });
});

describe('abort', () => {
  it('a signal stops a retry sleep promptly', async () => {
    sandbox.setFaults({ errorRate: 1 });
    const controller = new AbortController();
    const reason = new Error('shutting down');
    const { client, retries } = observedClient(sandbox.baseUrl, credential(), {
      sleep: undefined, // the real, abortable sleep
      random: () => 0.99,
      retry: { baseMs: 50_000, capMs: 50_000, maxElapsedMs: 120_000 },
      // abort once the client is sleeping ~49.5 s before its next attempt
      onRetry: () => setImmediate(() => controller.abort(reason)),
    });
    // the sleep is ~49.5 s, longer than the test's timeout: the call ending at all proves the abort
    await expect(client.listEvents({}, { signal: controller.signal })).rejects.toBe(reason);
    expect(retries).toHaveLength(1);
  });

  it('a signal aborts a request in flight', async () => {
    sandbox.setFaults({ hangRate: 1 });
    const controller = new AbortController();
    const reason = new Error('stop now');
    const { client, retries } = observedClient(proxy.baseUrl, credential(), { timeoutMs: 30_000 });
    const before = proxy.seen.length;
    const call = client.listEvents({}, { signal: controller.signal });
    // abort once the request has reached the server (the proxy saw it)
    await waitFor(() => proxy.seen.length > before, { timeoutMs: 20_000, what: 'the proxy to see the request', intervalMs: 5 });
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    expect(retries).toEqual([]);
  });

  it('the client-wide signal aborts every call', async () => {
    const reason = new Error('client closed');
    const { client } = observedClient(sandbox.baseUrl, credential(), { signal: AbortSignal.abort(reason) });
    await expect(client.listEvents()).rejects.toBe(reason);
  });
});
