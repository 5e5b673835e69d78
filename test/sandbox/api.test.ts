import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prescriptionResponseSchema, subscriptionSchema } from '../../src/intake/index.js';
import { ManualClock } from '../../src/sandbox/clock.js';
import { identityOf, samplePrescription } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { bearerToken } from '../../src/sandbox/auth.js';
import { call } from '../support/sandbox/client.js';

const ALICE = { key: 'alice', secret: 'alice-secret' };
const BOB = { key: 'bob', secret: 'bob-secret' };
const clock = new ManualClock();
let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ clock, credentials: [ALICE, BOB] });
});
afterAll(async () => {
  await sandbox.close();
});

describe('authentication', () => {
  it.each([
    ['missing header', null],
    ['wrong secret', `Bearer ${bearerToken('alice', 'nope')}`],
    ['unknown key', `Bearer ${bearerToken('carol', 'alice-secret')}`],
    ['not base64', 'Bearer %%%'],
    ['basic scheme', `Basic ${bearerToken('alice', 'alice-secret')}`],
  ])('%s → 401 {error}', async (_, authorization) => {
    for (const path of ['/events', '/prescriptions/rx-1', '/subscriptions/sub_1_0']) {
      const res = await call(sandbox, 'GET', path, { authorization });
      expect(res.status).toBe(401);
      expect(typeof res.body.error).toBe('string');
    }
  });

  it("a credential does not see another credential's prescriptions, subscriptions or events", async () => {
    const created = await call(sandbox, 'POST', '/prescriptions', { body: { prescription: samplePrescription(900, { prefix: 'iso' }) } });
    expect(created.status).toBe(201);
    const own = await call(sandbox, 'GET', '/prescriptions/iso-900');
    expect(own.status).toBe(200);
    expect((await call(sandbox, 'GET', '/prescriptions/iso-900', { credential: BOB })).status).toBe(404);
    expect((await call(sandbox, 'DELETE', '/prescriptions/iso-900', { credential: BOB })).status).toBe(404);
    expect((await call(sandbox, 'GET', '/subscriptions/sub_1_0', { credential: BOB })).status).toBe(404);
    clock.advance(30 * 60_000);
    const aliceFeed = await call(sandbox, 'GET', '/events');
    expect(aliceFeed.body.events.length).toBeGreaterThan(0);
    const bobFeed = await call(sandbox, 'GET', '/events', { credential: BOB });
    expect(bobFeed.body.events).toEqual([]);
    expect((await call(sandbox, 'GET', `/events/${aliceFeed.body.events[0].id}`, { credential: BOB })).status).toBe(404);
    // the same external_id is free for another credential
    const bobCreate = await call(sandbox, 'POST', '/prescriptions', {
      credential: BOB,
      body: { prescription: samplePrescription(900, { prefix: 'iso' }) },
    });
    expect(bobCreate.status).toBe(201);
  });

  it('a revoked credential gets 401; re-adding it restores its data', async () => {
    sandbox.store.addCredential({ key: 'dave', secret: 'd' });
    const dave = { key: 'dave', secret: 'd' };
    expect(
      (
        await call(sandbox, 'POST', '/prescriptions', {
          credential: dave,
          body: { prescription: samplePrescription(1, { prefix: 'dave' }) },
        })
      ).status,
    ).toBe(201);
    sandbox.store.revokeCredential('dave');
    expect((await call(sandbox, 'GET', '/prescriptions/dave-1', { credential: dave })).status).toBe(401);
    sandbox.store.addCredential(dave);
    expect((await call(sandbox, 'GET', '/prescriptions/dave-1', { credential: dave })).status).toBe(200);
  });
});

describe('POST /prescriptions', () => {
  it.each([
    ['not JSON', '{"prescription":'],
    ['empty body', ''],
    ['an array', '[]'],
    ['no prescription key', '{"rx":{}}'],
    ['prescription is not an object', '{"prescription":"x"}'],
    ['prescription is null', '{"prescription":null}'],
    ['prescription is an array', '{"prescription":[]}'],
  ])('%s → 400 {error}', async (_, rawBody) => {
    const res = await call(sandbox, 'POST', '/prescriptions', { rawBody });
    expect(res.status).toBe(400);
    expect(typeof res.body.error).toBe('string');
  });

  const valid = samplePrescription(1, { prefix: 'v' });
  it.each([
    ['bad dob', { patient: { ...valid.patient, dob: '01/02/1980' } }, 'prescription.patient.dob', 'must be a date in YYYY-MM-DD format'],
    ['missing external_id', { external_id: undefined }, 'prescription.external_id', 'is required'],
    [
      'bad state',
      { patient: { ...valid.patient, address: { ...valid.patient.address, state: 'PR' } } },
      'prescription.patient.address.state',
      undefined,
    ],
    ['unknown ndc', { medication: { ...valid.medication, ndc: '12345678901' } }, 'prescription.medication.ndc', undefined],
    ['bad npi check digit', { prescriber: { ...valid.prescriber, npi: '1000000005' } }, 'prescription.prescriber.npi', undefined],
    ['wrong pharmacy', { pharmacy: { ...valid.pharmacy, ncpdpid: '1' } }, 'prescription.pharmacy.ncpdpid', undefined],
    ['missing patient', { patient: undefined }, 'prescription.patient', 'is required'],
    ['refills not an integer', { number_of_refills: 1.5 }, 'prescription.number_of_refills', undefined],
  ])('%s → 422 keyed by %s', async (_, change, path, message) => {
    const res = await call(sandbox, 'POST', '/prescriptions', { body: { prescription: { ...valid, ...change } } });
    expect(res.status).toBe(422);
    expect(Array.isArray(res.body.errors[path])).toBe(true);
    if (message) expect(res.body.errors[path]).toContain(message);
  });

  it('creates, answers the response shape, and refuses a duplicate external_id', async () => {
    const request = {
      ...samplePrescription(2, { prefix: 'shape' }),
      allergies: [
        { source_of_information: 'P', adverse_event: { text: 'rash', code: null }, drug_product: { code: null, text: 'penicillin' } },
      ],
    };
    const res = await call(sandbox, 'POST', '/prescriptions', { body: { prescription: request } });
    expect(res.status).toBe(201);
    const prescription = prescriptionResponseSchema.parse(res.body.prescription);
    expect(prescription.cancellation_requested_at).toBeNull();
    expect(Object.keys(res.body.prescription.prescriber).sort()).toEqual(['fax', 'npi']);
    expect(Object.keys(res.body.prescription.pharmacy)).toEqual(['ncpdpid']);
    expect(res.body.prescription.allergies[0].drug_product).toEqual({ code: null });
    const dup = await call(sandbox, 'POST', '/prescriptions', { body: { prescription: request } });
    expect(dup.status).toBe(422);
    expect(dup.body.errors).toEqual({ 'prescription.external_id': ['has already been taken'] });
  });

  it('answers allergies null when the history is unknown', async () => {
    const { allergies: _, ...withoutAllergies } = samplePrescription(4, { prefix: 'noallergy' });
    const res = await call(sandbox, 'POST', '/prescriptions', { body: { prescription: withoutAllergies } });
    expect(res.status).toBe(201);
    expect(res.body.prescription).toHaveProperty('allergies', null);
  });

  it('creates the subscription automatically', async () => {
    const request = samplePrescription(3, { prefix: 'auto' });
    await call(sandbox, 'POST', '/prescriptions', { body: { prescription: request } });
    const tenantSubs = [...(await sandboxSubscriptionsFor(request))];
    expect(tenantSubs).toHaveLength(1);
    expect(tenantSubs[0]?.backfillPreviousEvents).toBe(false);
  });
});

async function sandboxSubscriptionsFor(request: ReturnType<typeof samplePrescription>) {
  const tenant = sandbox.store.authenticate(ALICE.key, ALICE.secret)!;
  const identity = identityOf(request);
  return [...tenant.subscriptions.values()].filter((s) => s.identity.patient_first_name === identity.patient_first_name);
}

describe('GET / DELETE /prescriptions/{external_id}', () => {
  it('gets, cancels idempotently, and 404s unknown ids', async () => {
    await call(sandbox, 'POST', '/prescriptions', { body: { prescription: samplePrescription(5, { prefix: 'cancel' }) } });
    const got = await call(sandbox, 'GET', '/prescriptions/cancel-5');
    expect(got.status).toBe(200);
    prescriptionResponseSchema.parse(got.body.prescription);
    const first = await call(sandbox, 'DELETE', '/prescriptions/cancel-5');
    expect(first.status).toBe(200);
    const flaggedAt = first.body.prescription.cancellation_requested_at;
    expect(Date.parse(flaggedAt)).toBe(sandbox.clock.now());
    clock.advance(1_000);
    const second = await call(sandbox, 'DELETE', '/prescriptions/cancel-5');
    expect(second.body.prescription.cancellation_requested_at).toBe(flaggedAt);
    expect((await call(sandbox, 'GET', '/prescriptions/cancel-5')).body.prescription.cancellation_requested_at).toBe(flaggedAt);
    for (const method of ['GET', 'DELETE']) {
      const res = await call(sandbox, method, '/prescriptions/nope');
      expect(res.status).toBe(404);
      expect(typeof res.body.error).toBe('string');
    }
  });

  it('answers 404 for unknown paths and 405 for wrong methods', async () => {
    expect((await call(sandbox, 'GET', '/nothing')).status).toBe(404);
    expect((await call(sandbox, 'PUT', '/prescriptions/x')).status).toBe(405);
    expect((await call(sandbox, 'POST', '/events')).status).toBe(405);
    expect((await fetch(`${sandbox.origin}/other`)).status).toBe(404);
  });
});

describe('subscriptions', () => {
  const identity = identityOf(samplePrescription(42, { prefix: 'sub' }));

  it.each([
    ['not JSON', 'nope'],
    ['no subscription object', '{"prescription_identity":{}}'],
    ['subscription is a string', '{"subscription":"x"}'],
  ])('%s → 400', async (_, rawBody) => {
    const res = await call(sandbox, 'POST', '/subscriptions', { rawBody });
    expect(res.status).toBe(400);
    expect(typeof res.body.error).toBe('string');
  });

  it.each([
    ['missing identity', { backfill_previous_events: true }, 'subscription.prescription_identity', 'is required'],
    [
      'bad npi',
      { prescription_identity: { ...identity, prescriber_npi: '123' } },
      'subscription.prescription_identity.prescriber_npi',
      undefined,
    ],
    [
      'empty first name',
      { prescription_identity: { ...identity, patient_first_name: ' ' } },
      'subscription.prescription_identity.patient_first_name',
      undefined,
    ],
    [
      'backfill not boolean',
      { backfill_previous_events: 'yes', prescription_identity: identity },
      'subscription.backfill_previous_events',
      undefined,
    ],
  ])('%s → 422 keyed by %s', async (_, subscription, path, message) => {
    const res = await call(sandbox, 'POST', '/subscriptions', { body: { subscription } });
    expect(res.status).toBe(422);
    expect(Array.isArray(res.body.errors[path])).toBe(true);
    if (message) expect(res.body.errors[path]).toContain(message);
  });

  it('creates, gets and cancels a subscription; 404 for unknown ids', async () => {
    const created = await call(sandbox, 'POST', '/subscriptions', {
      body: { subscription: { prescription_identity: { ...identity, erx_message_id: 'erx-9' } } },
    });
    expect(created.status).toBe(201);
    const subscription = subscriptionSchema.parse(created.body.subscription);
    expect(subscription).toMatchObject({ backfill_previous_events: null, api_version: '2024-12-10', cancelled_at: null });
    expect(subscription.prescription_identity.erx_message_id).toBe('erx-9');
    const got = await call(sandbox, 'GET', `/subscriptions/${subscription.id}`);
    expect(got.status).toBe(200);
    expect(got.body.subscription).toEqual(created.body.subscription);
    const cancelled = await call(sandbox, 'DELETE', `/subscriptions/${subscription.id}`);
    expect(cancelled.status).toBe(200);
    expect(Date.parse(cancelled.body.subscription.cancelled_at)).toBe(sandbox.clock.now());
    for (const method of ['GET', 'DELETE']) expect((await call(sandbox, method, '/subscriptions/sub_unknown')).status).toBe(404);
  });
});
