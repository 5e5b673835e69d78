import { once } from 'node:events';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { eventSchema } from '../../src/intake/index.js';
import { ManualClock } from '../../src/sandbox/clock.js';
import { UNKNOWN_EVENT_NAME } from '../../src/sandbox/publisher.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/server.js';
import { admin, call, readFeed } from '../support/sandbox/client.js';

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

async function start(options: SandboxOptions = {}): Promise<Sandbox> {
  sandbox = await startSandbox({ clock: new ManualClock(), ...options });
  return sandbox;
}

describe('transport faults (100% rate)', () => {
  it('errorRate: 500 JSON or 502/503 HTML', async () => {
    const sb = await start({ faults: { errorRate: 1 } });
    const seen = new Set<number>();
    for (let i = 0; i < 20; i++) {
      const res = await call(sb, 'GET', '/events');
      seen.add(res.status);
      if (res.status === 500) expect(typeof res.body.error).toBe('string');
      else expect(res.headers.get('content-type')).toMatch(/text\/html/);
    }
    expect([...seen].sort()).toEqual([500, 502, 503]);
  });

  it('rateLimitRate: 429 with Retry-After', async () => {
    const sb = await start({ faults: { rateLimitRate: 1, retryAfterSeconds: 7 } });
    const res = await call(sb, 'GET', '/events');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
  });

  it('dropRate: the socket is destroyed without a response', async () => {
    const sb = await start({ faults: { dropRate: 1 } });
    await expect(call(sb, 'GET', '/events')).rejects.toThrow(/fetch failed/);
  });

  it('hangRate: no answer until the client gives up; close() still returns promptly', async () => {
    const sb = await start({ faults: { hangRate: 1 } });
    const signal = AbortSignal.timeout(200);
    await expect(fetch(`${sb.baseUrl}/events`, { signal })).rejects.toThrow();
    // a held request on a socket of our own: its bytes are written before close() is called
    const held = connect(sb.port, '127.0.0.1');
    const closed = new Promise((resolve) => held.once('close', resolve));
    held.on('error', () => {}); // the reset close() gives it is the point
    await once(held, 'connect');
    await new Promise<void>((resolve, reject) =>
      held.write(`GET ${new URL(sb.baseUrl).pathname}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`, (e) => (e ? reject(e) : resolve())),
    );
    // the hang never answers: close() returning at all proves it ends held sockets instead of waiting
    await sb.close();
    await closed;
    expect(held.bytesRead).toBe(0);
  });

  it('latencyMs delays the answer', async () => {
    const sb = await start({ faults: { latencyMs: 150 } });
    const started = performance.now();
    expect((await call(sb, 'GET', '/events')).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('truncatedRate: 200 with a body that is not complete JSON', async () => {
    const sb = await start({ faults: { truncatedRate: 1 } });
    sb.store.seedBulk({ count: 2 });
    const res = await call(sb, 'GET', '/events');
    expect(res.status).toBe(200);
    expect(() => JSON.parse(res.text)).toThrow();
  });

  it('wrongShapeRate: 200 with valid JSON of the wrong shape', async () => {
    const sb = await start({ faults: { wrongShapeRate: 1 } });
    const res = await call(sb, 'GET', '/events');
    expect(res.status).toBe(200);
    const ok = Array.isArray(res.body?.events) && typeof res.body?.meta?.iterator === 'string';
    expect(ok).toBe(false);
  });

  it('never applies to /_sandbox and can be switched off at runtime', async () => {
    const sb = await start({ faults: { errorRate: 1 } });
    expect((await admin(sb, 'stats')).status).toBe(200);
    sb.setFaults({ errorRate: 0 });
    expect((await call(sb, 'GET', '/events')).status).toBe(200);
  });
});

describe('content faults', () => {
  it('duplicate, malformed and unknown-name entries are written into the feed and read the same twice', async () => {
    const sb = await start({ faults: { duplicateRate: 0.3, malformedRate: 0.3, unknownNameRate: 0.3, seed: 11 } });
    sb.store.seedBulk({ count: 60 });
    const first = await readFeed(sb, 250);
    expect(await readFeed(sb, 7)).toEqual(first);
    const valid = first.filter((e) => eventSchema.safeParse(e).success);
    const ids = valid.map((e) => e.id);
    expect(new Set(ids).size).toBeLessThan(ids.length); // duplicates share an id
    expect(valid.some((e) => e.name === UNKNOWN_EVENT_NAME)).toBe(true);
    expect(first.length - valid.length).toBeGreaterThan(0); // malformed entries
    const known = valid.filter((e) => e.name !== UNKNOWN_EVENT_NAME);
    expect(new Set(known.map((e) => e.id)).size).toBe(240);
  });

  it('the same seed gives the same feed', async () => {
    const faults = { duplicateRate: 0.2, malformedRate: 0.2, seed: 5 };
    const a = await start({ faults, credentials: [{ key: 'k', secret: 's' }] });
    a.store.seedBulk({ count: 30 });
    const feedA = await readFeed(a, 250);
    await a.close();
    const b = await start({ faults, credentials: [{ key: 'k', secret: 's' }] });
    b.store.seedBulk({ count: 30 });
    expect(await readFeed(b, 250)).toEqual(feedA);
  });

  it('reorderWindow lets a later lifecycle event precede an earlier one', async () => {
    // windows span consecutive due steps: 50 accepted then 50 ordered, so a window of 120 mixes steps
    const sb = await start({ faults: { reorderWindow: 120, seed: 3 } });
    sb.store.seedBulk({ count: 50 });
    const feed = await readFeed(sb, 250);
    expect(feed).toHaveLength(200);
    const order = ['accepted', 'ordered', 'dispensed', 'delivered'];
    const outOfOrder = feed.some((event, i) =>
      feed
        .slice(i + 1)
        .some((later) => later.subscription_id === event.subscription_id && order.indexOf(later.name) < order.indexOf(event.name)),
    );
    expect(outOfOrder).toBe(true);
  });

  it("iteratorMode 'at': the next page starts with the last returned event", async () => {
    const sb = await start({ faults: { iteratorMode: 'at' } });
    sb.store.seedBulk({ count: 1 });
    const first = await call(sb, 'GET', '/events?limit=2');
    const second = await call(sb, 'GET', `/events?limit=2&iterator=${first.body.meta.iterator}`);
    expect(second.body.events[0]).toEqual(first.body.events[1]);
  });

  it('injectRawEvents appends raw values as-is', async () => {
    const sb = await start();
    sb.store.injectRawEvents(sb.credentials[0]!.key, [{ id: 'x', name: 7 }, 'text', null, [1]]);
    expect(await readFeed(sb, 250)).toEqual([{ id: 'x', name: 7 }, 'text', null, [1]]);
  });
});

describe('seedBulk and admin endpoints', () => {
  it('seedBulk creates prescriptions, subscriptions and due events without HTTP; refuses a reused prefix', async () => {
    const sb = await start();
    expect(sb.store.seedBulk({ count: 10, rejectEvery: 3, prefix: 'b' })).toEqual({ prescriptions: 10, events: 3 * 1 + 7 * 4 });
    expect((await readFeed(sb, 250)).length).toBe(31);
    expect((await call(sb, 'GET', '/prescriptions/b-2')).status).toBe(200);
    expect(() => sb.store.seedBulk({ count: 1, prefix: 'b' })).toThrow(/b-0/);
    const stats = sb.store.stats();
    expect(stats.credentials[0]).toMatchObject({ prescriptions: 10, subscriptions: 10, feed_entries: 31 });
  });

  it('drives faults, clock, seed, inject, credentials and stats over HTTP', async () => {
    const clock = new ManualClock(0);
    const sb = await start({ clock, credentials: [{ key: 'k', secret: 's' }] });
    const faults = await admin(sb, 'faults', { rateLimitRate: 0.5 });
    expect(faults.body).toMatchObject({ rateLimitRate: 0.5, errorRate: 0, iteratorMode: 'after' });
    expect((await admin(sb, 'faults', { rateLimitRate: 5 })).status).toBe(400);
    await admin(sb, 'faults', { rateLimitRate: 0 });
    expect((await admin(sb, 'clock', { advance_ms: 60_000 })).body).toEqual({ now: new Date(60_000).toISOString(), now_ms: 60_000 });
    expect(clock.now()).toBe(60_000);
    expect((await admin(sb, 'seed', { count: 4, reject_every: 2, prefix: 'h' })).body).toEqual({ prescriptions: 4, events: 10 });
    expect((await admin(sb, 'seed', { count: 1, prefix: 'h' })).status).toBe(409);
    expect((await admin(sb, 'inject', { events: [{ bad: true }] })).body).toEqual({ appended: 1 });
    expect((await readFeed(sb, 250)).length).toBe(11);
    expect((await admin(sb, 'credentials', { add: { key: 'k2', secret: 's2' }, revoke: 'k' })).body).toEqual({ keys: ['k2'] });
    expect((await call(sb, 'GET', '/events')).status).toBe(401);
    const stats = await admin(sb, 'stats');
    expect(stats.body.credentials.map((c: any) => [c.key, c.active])).toEqual([
      ['k', false],
      ['k2', true],
    ]);
    expect((await admin(sb, 'nope', {})).status).toBe(404);
  });

  it('admin: false serves no /_sandbox routes', async () => {
    const sb = await start({ admin: false });
    expect((await fetch(`${sb.origin}/_sandbox/stats`)).status).toBe(404);
  });
});
