import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventSchema } from '../../src/intake/index.js';
import { ManualClock } from '../../src/sandbox/clock.js';
import { identityOf, samplePrescription } from '../../src/sandbox/fixtures.js';
import { encodeIterator } from '../../src/sandbox/iterator.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { call, MINUTE, readFeed } from '../support/sandbox/client.js';

let clock: ManualClock;
let sandbox: Sandbox;

beforeEach(async () => {
  clock = new ManualClock(Date.UTC(2025, 0, 1));
  sandbox = await startSandbox({ clock });
});
afterEach(async () => {
  await sandbox.close();
});

async function send(i: number, opts: { prefix?: string; rejected?: boolean } = {}): Promise<void> {
  const res = await call(sandbox, 'POST', '/prescriptions', { body: { prescription: samplePrescription(i, opts) } });
  expect(res.status).toBe(201);
}

const names = (events: any[]) => events.map((e) => e.name);

describe('sandbox schedule', () => {
  it('happy path: nothing at 4:59, accepted at 5:00, then ordered, dispensed, delivered every 5 minutes', async () => {
    const receivedAt = clock.now();
    await send(1);
    clock.advance(5 * MINUTE - 1_000);
    expect(await readFeed(sandbox, 250)).toEqual([]);
    const expected = ['accepted', 'ordered', 'dispensed', 'delivered'];
    for (const [step, name] of expected.entries()) {
      clock.set(receivedAt + (step + 1) * 5 * MINUTE - 1);
      expect(names(await readFeed(sandbox, 250))).toEqual(expected.slice(0, step));
      clock.set(receivedAt + (step + 1) * 5 * MINUTE);
      const events = await readFeed(sandbox, 250);
      expect(names(events)).toEqual(expected.slice(0, step + 1));
      const event = eventSchema.parse(events[step]);
      expect(event).toMatchObject({
        name,
        pharmacy_npi: '1689411712',
        api_version: '2024-12-10',
        payload: {},
        occurred_at: new Date(receivedAt + (step + 1) * 5 * MINUTE).toISOString(),
        prescription_identity: identityOf(samplePrescription(1)),
      });
    }
    clock.advance(60 * MINUTE);
    expect(names(await readFeed(sandbox, 250))).toEqual(expected);
  });

  it('rejection path: identical names give a single rejected at 5 minutes and nothing further', async () => {
    await send(2, { rejected: true });
    clock.advance(5 * MINUTE - 1);
    expect(await readFeed(sandbox, 250)).toEqual([]);
    clock.advance(1);
    expect(names(await readFeed(sandbox, 250))).toEqual(['rejected']);
    clock.advance(60 * MINUTE);
    expect(names(await readFeed(sandbox, 250))).toEqual(['rejected']);
  });

  it('publishes due events in due order, ties by creation order, with unique ids', async () => {
    await send(1);
    await send(2);
    clock.advance(2 * MINUTE);
    await send(3, { rejected: true });
    clock.advance(30 * MINUTE);
    const events = await readFeed(sandbox, 250);
    const tags = events.map((e) => `${e.prescription_identity.patient_first_name}:${e.name}`);
    expect(tags).toEqual([
      'Testpatb:accepted',
      'Testpatc:accepted',
      'Testpatd:rejected',
      'Testpatb:ordered',
      'Testpatc:ordered',
      'Testpatb:dispensed',
      'Testpatc:dispensed',
      'Testpatb:delivered',
      'Testpatc:delivered',
    ]);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  });

  it('a cancelled prescription keeps publishing its scheduled events (cancellation only flags)', async () => {
    await send(7);
    expect((await call(sandbox, 'DELETE', '/prescriptions/rx-7')).status).toBe(200);
    clock.advance(20 * MINUTE);
    expect(names(await readFeed(sandbox, 250))).toEqual(['accepted', 'ordered', 'dispensed', 'delivered']);
  });
});

describe('subscriptions and publication', () => {
  it('a cancelled subscription publishes nothing further', async () => {
    await send(1);
    clock.advance(10 * MINUTE);
    const subscriptionId = (await readFeed(sandbox, 250))[0].subscription_id;
    expect((await call(sandbox, 'DELETE', `/subscriptions/${subscriptionId}`)).status).toBe(200);
    clock.advance(30 * MINUTE);
    expect(names(await readFeed(sandbox, 250))).toEqual(['accepted', 'ordered']);
  });

  it('a second matching subscription gets its own copies with its subscription_id (identity matched case-insensitively)', async () => {
    await send(1);
    const identity = identityOf(samplePrescription(1));
    const shouting = {
      ...identity,
      patient_first_name: ` ${identity.patient_first_name.toUpperCase()} `,
      patient_last_name: identity.patient_last_name.toLowerCase(),
    };
    const created = await call(sandbox, 'POST', '/subscriptions', { body: { subscription: { prescription_identity: shouting } } });
    expect(created.status).toBe(201);
    const mismatch = await call(sandbox, 'POST', '/subscriptions', {
      body: { subscription: { prescription_identity: { ...identity, patient_state: 'ZZ' } } },
    });
    expect(mismatch.status).toBe(201);
    clock.advance(5 * MINUTE);
    const events = await readFeed(sandbox, 250);
    expect(names(events)).toEqual(['accepted', 'accepted']);
    const subscriptions = events.map((e) => e.subscription_id);
    expect(subscriptions[1]).toBe(created.body.subscription.id);
    expect(subscriptions[0]).not.toBe(subscriptions[1]);
    expect(events[0].id).not.toBe(events[1].id);
  });

  it('backfill publishes already logged events with new ids and original occurred_at; without backfill nothing old', async () => {
    await send(1);
    clock.advance(12 * MINUTE);
    const before = await readFeed(sandbox, 250);
    expect(names(before)).toEqual(['accepted', 'ordered']);
    const identity = identityOf(samplePrescription(1));
    const plain = await call(sandbox, 'POST', '/subscriptions', {
      body: { subscription: { backfill_previous_events: false, prescription_identity: identity } },
    });
    expect((await readFeed(sandbox, 250)).length).toBe(2);
    const backfilled = await call(sandbox, 'POST', '/subscriptions', {
      body: { subscription: { backfill_previous_events: true, prescription_identity: identity } },
    });
    expect(backfilled.body.subscription.backfill_previous_events).toBe(true);
    const after = await readFeed(sandbox, 250);
    const copies = after.slice(2);
    expect(names(copies)).toEqual(['accepted', 'ordered']);
    expect(copies.map((e) => e.subscription_id)).toEqual([backfilled.body.subscription.id, backfilled.body.subscription.id]);
    expect(copies.map((e) => e.occurred_at)).toEqual(before.map((e) => e.occurred_at));
    expect(copies.map((e) => e.id)).not.toEqual(before.map((e) => e.id));
    clock.advance(5 * MINUTE);
    const dispensed = (await readFeed(sandbox, 250)).slice(4);
    expect(dispensed.map((e) => [e.name, e.subscription_id])).toEqual([
      ['dispensed', before[0].subscription_id],
      ['dispensed', plain.body.subscription.id],
      ['dispensed', backfilled.body.subscription.id],
    ]);
  });

  it('an erx_message_id on the subscription alone still matches an API-received prescription', async () => {
    await send(1);
    const identity = { ...identityOf(samplePrescription(1)), erx_message_id: 'erx-123' };
    const sub = await call(sandbox, 'POST', '/subscriptions', { body: { subscription: { prescription_identity: identity } } });
    clock.advance(5 * MINUTE);
    expect((await readFeed(sandbox, 250)).map((e) => e.subscription_id)).toContain(sub.body.subscription.id);
  });
});

describe('GET /events', () => {
  it('paging with limit 1 and limit 250 sees exactly the same events in the same order', async () => {
    sandbox.store.seedBulk({ count: 120, rejectEvery: 7 });
    const big = await readFeed(sandbox, 250);
    expect(big.length).toBe(120 * 4 - 17 * 3);
    expect(await readFeed(sandbox, 1)).toEqual(big);
    expect(await readFeed(sandbox, 33)).toEqual(big);
    for (const event of big) eventSchema.parse(event);
  });

  it('meta: limit echoed, iterator after the last event (same when nothing returned), done when drained', async () => {
    sandbox.store.seedBulk({ count: 1 });
    const first = await call(sandbox, 'GET', '/events?limit=3');
    expect(first.body.meta).toEqual({ limit: 3, iterator: encodeIterator(3, sandbox.store.instance), done: false });
    const second = await call(sandbox, 'GET', `/events?limit=3&iterator=${first.body.meta.iterator}`);
    expect(second.body.events).toHaveLength(1);
    expect(second.body.meta).toEqual({ limit: 3, iterator: encodeIterator(4, sandbox.store.instance), done: true });
    const empty = await call(sandbox, 'GET', `/events?iterator=${second.body.meta.iterator}`);
    expect(empty.body).toEqual({ events: [], meta: { limit: 250, iterator: encodeIterator(4, sandbox.store.instance), done: true } });
    const replay = await call(sandbox, 'GET', '/events?limit=3');
    expect(replay.text).toBe(first.text);
  });

  it.each(['0', '251', 'abc', '', '-5', '2.5'])('limit=%s → 400 {error}', async (limit) => {
    const res = await call(sandbox, 'GET', `/events?limit=${limit}`);
    expect(res.status).toBe(400);
    expect(typeof res.body.error).toBe('string');
  });

  it.each(['garbage', '', Buffer.from('p1:x').toString('base64url'), Buffer.from('p1:0').toString('base64url')])(
    'iterator %s (unparseable, or of the old format) → 400',
    async (iterator) => {
      const res = await call(sandbox, 'GET', `/events?iterator=${encodeURIComponent(iterator)}`);
      expect(res.status).toBe(400);
      expect(typeof res.body.error).toBe('string');
    },
  );

  it('an iterator beyond the feed, or one another run of the simulator issued, → 400', async () => {
    for (const iterator of [encodeIterator(5, sandbox.store.instance), encodeIterator(0, 'ffffffff')]) {
      const res = await call(sandbox, 'GET', `/events?iterator=${iterator}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('iterator is not valid for this feed');
    }
  });

  it('GET /events/{id}: 200 {event} for a published id, 404 otherwise', async () => {
    sandbox.store.seedBulk({ count: 2 });
    const events = await readFeed(sandbox, 250);
    for (const event of events) {
      const res = await call(sandbox, 'GET', `/events/${event.id}`);
      expect(res.status).toBe(200);
      expect(res.body.event).toEqual(event);
    }
    for (const id of ['evt_1_zz', 'evt_2_0', 'nope', 'evt_1_00']) {
      const res = await call(sandbox, 'GET', `/events/${id}`);
      expect(res.status).toBe(404);
      expect(typeof res.body.error).toBe('string');
    }
  });
});
