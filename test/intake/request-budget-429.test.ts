import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { IntakeClient } from '../../src/intake/client.js';
import { HostRequestBudget } from '../../src/intake/request-budget.js';

// Two accounts at one operator host share its budget (OPERATOR_MAX_RPS). The operator answers one
// of them 429 with Retry-After: that account waits its own Retry-After, and the other's requests go
// through meanwhile, taking nothing from it. A real socket server; the waits are observed, not slept.
describe('a 429 slows its account only', () => {
  let server: Server;
  let baseUrl = '';
  const seen: string[] = [];
  const token = (key: string) => `Bearer ${Buffer.from(`${key}:secret-0123456789`).toString('base64')}`;

  beforeAll(async () => {
    server = createServer((request, response) => {
      const limited = request.headers.authorization === token('limited');
      seen.push(limited ? 'limited' : 'other');
      if (limited) {
        response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '30' });
        response.end(JSON.stringify({ error: { code: 'rate_limited', message: 'slow down' } }));
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ events: [], meta: { limit: 1, iterator: 'it-1', done: true } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/intake_api/2024-12-10`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test('the limited account waits Retry-After; the other sends five requests meanwhile', async () => {
    const budget = new HostRequestBudget(100);
    const waits: number[] = [];
    let releaseLimited: () => void = () => {};
    const limitedWaiting = new Promise<void>((resolve) => (releaseLimited = resolve));
    let waitStarted: () => void = () => {};
    const started = new Promise<void>((resolve) => (waitStarted = resolve));
    const stop = new AbortController();
    const limited = new IntakeClient({
      baseUrl,
      apiKey: 'limited',
      apiSecret: 'secret-0123456789',
      requestBudget: budget.forAccount('limited'),
      // the retry wait, observed: held until the test has seen the other account's requests through
      sleep: async (ms) => {
        waits.push(ms);
        waitStarted();
        await limitedWaiting;
        stop.abort(new Error('test over'));
      },
      signal: stop.signal,
    });
    const other = new IntakeClient({ baseUrl, apiKey: 'other', apiSecret: 'secret-0123456789', requestBudget: budget.forAccount('other') });

    const limitedCall = limited.listEvents({ limit: 1 }).catch((error: unknown) => error);
    await started;
    for (let i = 0; i < 5; i++) expect((await other.listEvents({ limit: 1 })).meta.done).toBe(true);
    expect(budget.waiting()).toBe(0);
    expect(seen.filter((s) => s === 'other')).toHaveLength(5);
    // the limited account is still in its own Retry-After wait: at least the operator's 30 s
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(30_000);
    expect(seen.filter((s) => s === 'limited')).toHaveLength(1);
    releaseLimited();
    await limitedCall;
  });
});
