import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/sandbox/clock.js';
import { samplePrescription } from '../../src/sandbox/fixtures.js';
import { encodeIterator } from '../../src/sandbox/iterator.js';
import { decidePageStart, EXPIRED_ITERATOR_MESSAGE, type ExpiredIteratorMode } from '../../src/sandbox/retention.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { call, MINUTE } from '../support/sandbox/client.js';

describe('decidePageStart', () => {
  it.each<[number | null | undefined, number, number, ExpiredIteratorMode, ReturnType<typeof decidePageStart>]>([
    // no iterator: the oldest retained entry, in both modes
    [null, 0, 10, 'error', { ok: true, start: 0, jumped: false }],
    [null, 4, 10, 'error', { ok: true, start: 4, jumped: false }],
    [null, 10, 10, 'jump', { ok: true, start: 10, jumped: false }],
    // at or after the oldest retained entry: served as asked
    [4, 4, 10, 'error', { ok: true, start: 4, jumped: false }],
    [10, 4, 10, 'error', { ok: true, start: 10, jumped: false }],
    // before it: 400 or a silent jump
    [3, 4, 10, 'error', { ok: false, reason: 'expired' }],
    [0, 10, 10, 'error', { ok: false, reason: 'expired' }],
    [3, 4, 10, 'jump', { ok: true, start: 4, jumped: true }],
    [0, 10, 10, 'jump', { ok: true, start: 10, jumped: true }],
    // not an iterator of this feed: invalid whatever the retention
    [undefined, 0, 10, 'jump', { ok: false, reason: 'invalid' }],
    [11, 0, 10, 'error', { ok: false, reason: 'invalid' }],
    [11, 4, 10, 'jump', { ok: false, reason: 'invalid' }],
  ])('requested %s, oldest %i, length %i, %s', (requested, oldest, length, mode, expected) => {
    expect(decidePageStart(requested, oldest, length, mode)).toEqual(expected);
  });
});

describe('sandbox retention', () => {
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  // prescription 0 is sent at t0, prescription 1 at t0 + 60 min; each publishes 4 events 5 minutes apart
  async function twoGenerations(mode: ExpiredIteratorMode): Promise<{ clock: ManualClock; sandbox: Sandbox; firstPage: any }> {
    const clock = new ManualClock(Date.UTC(2025, 0, 1));
    sandbox = await startSandbox({ clock, retention: { ms: 90 * MINUTE, expiredIterator: mode } });
    expect((await call(sandbox, 'POST', '/prescriptions', { body: { prescription: samplePrescription(0) } })).status).toBe(201);
    clock.advance(60 * MINUTE);
    const firstPage = (await call(sandbox, 'GET', '/events?limit=2')).body;
    expect(firstPage.events.map((e: any) => e.name)).toEqual(['accepted', 'ordered']);
    expect((await call(sandbox, 'POST', '/prescriptions', { body: { prescription: samplePrescription(1) } })).status).toBe(201);
    clock.advance(60 * MINUTE);
    // now t0 + 120 min: prescription 0's events (published at +5..+20) are past 90 minutes, prescription 1's (+65..+80) are not
    return { clock, sandbox, firstPage };
  }

  it('drops entries older than the retention from GET /events and GET /events/{id}', async () => {
    const { sandbox } = await twoGenerations('error');
    const all = (await call(sandbox, 'GET', '/events')).body;
    expect(all.events.map((e: any) => e.name)).toEqual(['accepted', 'ordered', 'dispensed', 'delivered']);
    expect(new Set(all.events.map((e: any) => e.prescription_identity.patient_first_name))).toEqual(
      new Set([samplePrescription(1).patient.first_name]),
    );
    expect(all.events).toHaveLength(4);
    expect(all.meta.done).toBe(true);
    expect((await call(sandbox, 'GET', '/events/evt_1_0')).status).toBe(404);
    expect((await call(sandbox, 'GET', `/events/${all.events[0].id}`)).status).toBe(200);
  });

  it('error mode: an iterator before the oldest retained event gets 400 with a body naming the expiry', async () => {
    const { sandbox, firstPage } = await twoGenerations('error');
    const res = await call(sandbox, 'GET', `/events?iterator=${firstPage.meta.iterator}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: EXPIRED_ITERATOR_MESSAGE });
    // a position at the oldest retained entry is still served
    expect((await call(sandbox, 'GET', `/events?iterator=${encodeIterator(4, sandbox.store.instance)}`)).status).toBe(200);
    // an iterator this feed never issued stays the other 400
    expect((await call(sandbox, 'GET', `/events?iterator=${encodeIterator(99, sandbox.store.instance)}`)).body).toEqual({
      error: 'iterator is not valid for this feed',
    });
  });

  it('jump mode: the same iterator silently reads from the oldest retained event', async () => {
    const { sandbox, firstPage } = await twoGenerations('jump');
    const res = await call(sandbox, 'GET', `/events?iterator=${firstPage.meta.iterator}`);
    expect(res.status).toBe(200);
    const fromStart = (await call(sandbox, 'GET', '/events')).body;
    expect(res.body).toEqual(fromStart);
    expect(res.body.events).toHaveLength(4);
  });

  it('is deterministic under the manual clock: the cut moves exactly at the retention boundary', async () => {
    const clock = new ManualClock(Date.UTC(2025, 0, 1));
    sandbox = await startSandbox({ clock, retention: { ms: 10 * MINUTE, expiredIterator: 'error' } });
    await call(sandbox, 'POST', '/prescriptions', { body: { prescription: samplePrescription(0) } });
    clock.advance(5 * MINUTE); // accepted published now
    const first = (await call(sandbox, 'GET', '/events')).body;
    expect(first.events).toHaveLength(1);
    clock.advance(10 * MINUTE); // exactly the retention later: ordered (published at +10) is kept, accepted is at the edge
    const atEdge = (await call(sandbox, 'GET', '/events')).body;
    expect(atEdge.events.map((e: any) => e.name)).toEqual(['ordered', 'dispensed']);
    expect((await call(sandbox, 'GET', `/events?iterator=${encodeIterator(0, sandbox.store.instance)}`)).status).toBe(400);
    expect((await call(sandbox, 'GET', `/events?iterator=${encodeIterator(1, sandbox.store.instance)}`)).status).toBe(200);
  });
});
