import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IntakeClient } from '../../src/intake/client.js';
import {
  InsecureBaseUrlError,
  NotFoundError,
  RequestValidationError,
  UnauthorizedError,
  UnprocessableEntityError,
} from '../../src/intake/errors/index.js';
import { eventSchema } from '../../src/intake/event.js';
import type { PrescriptionRequestInput } from '../../src/intake/prescription.js';
import { ManualClock } from '../../src/sandbox/clock.js';
import { identityOf, samplePrescription } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { startForwardingProxy, type ForwardingProxy } from '../support/intake/forwarding-proxy.js';
import { observedClient } from '../support/intake/test-client.js';

const FIVE_MINUTES = 5 * 60 * 1000;

let sandbox: Sandbox;
let clock: ManualClock;
let proxy: ForwardingProxy;

beforeAll(async () => {
  clock = new ManualClock();
  sandbox = await startSandbox({ clock });
  proxy = await startForwardingProxy(sandbox.baseUrl);
});
afterAll(async () => {
  await proxy?.close();
  await sandbox?.close();
});

const credential = () => sandbox.credentials[0] ?? { key: '', secret: '' };

describe('IntakeClient against the sandbox', () => {
  it('201: sends a prescription, reads it back and cancels it', async () => {
    const { client } = observedClient(sandbox.baseUrl, credential());
    const request = samplePrescription(1, { prefix: 'statuses' });
    const created = await client.createPrescription(request);
    expect(created.external_id).toBe('statuses-1');
    expect(created.cancellation_requested_at).toBeNull();
    expect(await client.getPrescription('statuses-1')).toMatchObject({ external_id: 'statuses-1' });
    const cancelled = await client.cancelPrescription('statuses-1');
    expect(cancelled.cancellation_requested_at).toEqual(expect.any(String));
  });

  it('lists the events the sandbox published and reads one by id', async () => {
    const { client } = observedClient(sandbox.baseUrl, credential());
    await client.createPrescription(samplePrescription(2, { prefix: 'statuses' }));
    clock.advance(FIVE_MINUTES);
    const page = await client.listEvents({ limit: 250 });
    expect(page.meta).toMatchObject({ limit: 250, done: true, iterator: expect.any(String) });
    const events = page.events.map((raw) => eventSchema.parse(raw));
    const accepted = events.find(
      (e) => e.prescription_identity.patient_first_name === identityOf(samplePrescription(2, { prefix: 'statuses' })).patient_first_name,
    );
    expect(accepted?.name).toBe('accepted');
    expect(await client.getEvent(accepted?.id ?? '')).toMatchObject({ id: accepted?.id, name: 'accepted' });
    const after = await client.listEvents({ iterator: page.meta.iterator, limit: 1 });
    expect(after.events).toEqual([]);
  });

  it('creates, reads and cancels a subscription', async () => {
    const { client } = observedClient(sandbox.baseUrl, credential());
    const identity = identityOf(samplePrescription(3, { prefix: 'statuses' }));
    const created = await client.createSubscription({ prescription_identity: identity, backfill_previous_events: true });
    expect(created).toMatchObject({ backfill_previous_events: true, cancelled_at: null });
    expect((await client.getSubscription(created.id)).id).toBe(created.id);
    expect((await client.cancelSubscription(created.id)).cancelled_at).toEqual(expect.any(String));
  });

  it('401: UnauthorizedError after exactly one request, secret kept out of message and logs', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'trace' }, new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
    const secret = 'not-the-secret-xyz';
    const { client, retries } = observedClient(proxy.baseUrl, { key: credential().key, secret }, { logger });
    const before = proxy.count('GET', '/events');
    const error = await client.listEvents().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect((error as Error).message).toBe('GET /events: 401 Unauthorized (check INTAKE_API_KEY and INTAKE_API_SECRET)');
    expect(proxy.count('GET', '/events') - before).toBe(1);
    expect(retries).toEqual([]);
    const token = Buffer.from(`${credential().key}:${secret}`).toString('base64');
    for (const text of [...lines, (error as Error).message, JSON.stringify(error)]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(token);
    }
  });

  it.each([
    ['getEvent', (c: IntakeClient) => c.getEvent('ev_missing'), 'GET /events/ev_missing'],
    ['getPrescription', (c: IntakeClient) => c.getPrescription('no such?id'), 'GET /prescriptions/no%20such%3Fid'],
    ['cancelPrescription', (c: IntakeClient) => c.cancelPrescription('missing'), 'DELETE /prescriptions/missing'],
    ['cancelSubscription', (c: IntakeClient) => c.cancelSubscription('sub_missing'), 'DELETE /subscriptions/sub_missing'],
  ])('404: %s throws NotFoundError naming the encoded path, not retried', async (_name, call, request) => {
    const { client, retries } = observedClient(sandbox.baseUrl, credential());
    const error = await call(client).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as Error).message).toBe(`${request}: 404 Not Found`);
    expect(retries).toEqual([]);
  });

  it('encodes path segments: an external_id with a space, ? and # round-trips (a slash is refused: fail-closed-http.test.ts)', async () => {
    const { client } = observedClient(sandbox.baseUrl, credential());
    const request = { ...samplePrescription(4, { prefix: 'statuses' }), external_id: 'clinic a?rx#4' };
    await client.createPrescription(request);
    expect((await client.getPrescription('clinic a?rx#4')).external_id).toBe('clinic a?rx#4');
  });

  it('422: a duplicate external_id carries the errors object, not retried', async () => {
    const { client, retries } = observedClient(sandbox.baseUrl, credential());
    const request = samplePrescription(5, { prefix: 'statuses' });
    await client.createPrescription(request);
    const error = await client.createPrescription(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect((error as UnprocessableEntityError).errors).toEqual({ 'prescription.external_id': ['has already been taken'] });
    // issue 19 §5: the operator's own words, not "invalid"
    expect((error as Error).message).toBe(
      'POST /prescriptions: 422 Unprocessable Entity: prescription.external_id: has already been taken',
    );
    expect(retries).toEqual([]);
  });

  it('refuses an invalid prescription locally, naming the paths, before sending', async () => {
    const { client } = observedClient(proxy.baseUrl, credential());
    const before = proxy.seen.length;
    const bad = { ...samplePrescription(6), written_date: 'yesterday', medication: { ...samplePrescription(6).medication, ndc: '123' } };
    // untyped input, as from a file: the client must not trust its caller's types
    const error = await client.createPrescription(bad as unknown as PrescriptionRequestInput).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).issues.map((i) => i.path)).toEqual([
      'prescription.written_date',
      'prescription.medication.ndc',
    ]);
    expect(proxy.seen.length).toBe(before);
  });

  it.each([0, 251, 2.5, Number.NaN])('refuses limit %d before sending', async (limit) => {
    const { client } = observedClient(proxy.baseUrl, credential());
    const before = proxy.seen.length;
    await expect(client.listEvents({ limit })).rejects.toThrow(RequestValidationError);
    expect(proxy.seen.length).toBe(before);
  });

  it.each(['http://intake.example.com/intake_api/2024-12-10', 'http://192.168.1.10:8080/intake_api/2024-12-10'])(
    'refuses the non-loopback http base URL %s',
    (baseUrl) => {
      expect(() => new IntakeClient({ baseUrl, apiKey: 'k', apiSecret: 's' })).toThrow(InsecureBaseUrlError);
    },
  );
});
