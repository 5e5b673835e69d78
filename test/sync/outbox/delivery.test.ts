import { sql } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { queryRows, type Db } from '../../../src/db/connection.js';
import type { IntakeClient } from '../../../src/intake/client.js';
import { ManualClock } from '../../../src/sandbox/clock.js';
import { samplePrescription } from '../../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../../src/sandbox/server.js';
import { listLocalPrescriptions } from '../../../src/sync/matching/local-prescriptions.js';
import { deliverRow, type OutboxDeliveryDeps } from '../../../src/sync/outbox/delivery.js';
import { OutboxLoop } from '../../../src/sync/outbox/delivery-loop.js';
import { readOutboxStats } from '../../../src/store-api/outbox/outbox-stats.js';
import { claimAttempt, dueRows } from '../../../src/sync/outbox/store.js';
import { sleepUnlessAborted } from '../../../src/lib/loop-sleep.js';
import { MAX_API_BODY_BYTES } from '../../../src/intake/limits.js';
import { observedClient } from '../../support/intake/test-client.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { truncateStore } from '../../support/sync/fixtures.js';
import { waitFor } from '../../support/wait-for.js';

// The delivery against the real simulator (real sockets) and a real database.

const silent = pino({ level: 'silent' });
let tdb: TestDatabase;
let db: Db;
let sandbox: Sandbox;
let client: IntakeClient;

const literal = (value: unknown) => `'${JSON.stringify(value).replaceAll("'", "''")}'::jsonb`;
const run = (text: string) => queryRows<Record<string, unknown>>(db, sql.raw(text));
const send = async (i: number) => run(`select intake_sync.send_prescription(${literal(samplePrescription(i, { prefix: 'obx' }))})`);
const cancel = async (id: string) => run(`select intake_sync.cancel_prescription('${id}')`);
const rows = () =>
  run(
    'select id, external_id, kind, state, attempts, in_doubt, last_error, response_status, completed_at from intake_sync.outbox_status order by id',
  );
const ledger = async (id: string) => sandbox.store.requests.report(id)[id];

function deps(): OutboxDeliveryDeps {
  return { db, feed: 'default', client, backoff: { baseMs: 60_000, capMs: 60_000 }, random: () => 0.5, log: silent };
}

/** One cycle by hand: every due head-of-line row, in order. */
async function deliverDue(signal = new AbortController().signal): Promise<number> {
  const due = await dueRows(db, 'default', 100);
  for (const row of due) await deliverRow(deps(), row, signal);
  return due.length;
}

beforeAll(async () => {
  tdb = await createTestDatabase('outbox_delivery');
  db = tdb.database.db;
  sandbox = await startSandbox({ clock: new ManualClock() });
  const credential = sandbox.credentials[0] ?? { key: '', secret: '' };
  // one retry inside a call (the outbox's own backoff is under test), waits recorded not slept
  client = observedClient(sandbox.baseUrl, credential, {
    retry: { retries: 1, baseMs: 1, capMs: 1, maxElapsedMs: 5_000 },
    timeoutMs: 1_000,
  }).client;
});
afterAll(async () => {
  await sandbox?.close();
  await tdb.drop();
});
beforeEach(async () => {
  await truncateStore(db);
  await run('truncate intake_sync.outbox');
  sandbox.setFaults({ errorRate: 0, dropRate: 0, hangRate: 0, dropAfterProcessingRate: 0 });
});

describe('outbox delivery', () => {
  test('201: delivered, the local prescription recorded (its events will match); the cancel after it too', async () => {
    await send(1);
    await cancel('obx-1');
    expect(await deliverDue()).toBe(1); // the cancel waits behind its pending send
    expect(await deliverDue()).toBe(1);
    expect((await rows()).map((r) => [r.kind, r.state, r.attempts, r.response_status, r.in_doubt])).toEqual([
      ['send', 'delivered', 1, 201, false],
      ['cancel', 'delivered', 1, 200, false],
    ]);
    const [local] = await listLocalPrescriptions(db);
    expect(local?.external_id).toBe('obx-1');
    expect(local?.cancellation_requested_at).not.toBeNull();
    expect(await ledger('obx-1')).toEqual({ created: 1, duplicates_refused: 0, cancellations: 1 });
    expect(await readOutboxStats(db)).toEqual({ pending: 0, oldestPendingAgeSeconds: 0 });
  });

  test('the connection drops after the operator created it: reconciled by GET, created once', async () => {
    sandbox.setFaults({ dropAfterProcessingRate: 1 });
    await send(2);
    await deliverDue();
    expect((await rows()).map((r) => [r.state, r.response_status])).toEqual([['delivered', 200]]);
    expect(await ledger('obx-2')).toEqual({ created: 1, duplicates_refused: 0, cancellations: 0 });
  });

  test('due rows are listed without bodies; a body over the cap (queued before it) is failed unsent, never loaded', async () => {
    const huge = { ...samplePrescription(90, { prefix: 'obx' }), note: 'x'.repeat(MAX_API_BODY_BYTES) };
    // as a row queued before send_prescription had its cap: written by the owner, past the function
    await run(`insert into intake_sync.outbox (feed, external_id, kind, body) values ('default', 'obx-90', 'send', ${literal(huge)})`);
    const due = await dueRows(db, 'default', 10);
    expect(due.map((r) => Object.keys(r).sort())).toEqual([['externalId', 'id', 'kind', 'previousSend']]);
    await deliverDue();
    const [settled] = await rows();
    expect(settled).toMatchObject({ state: 'failed', response_status: null });
    expect(settled?.last_error).toContain(`prescription over ${MAX_API_BODY_BYTES} bytes of JSON`);
    expect(await ledger('obx-90')).toBeUndefined();
  });

  test('killed after its POST landed (claimed, never settled): the next leader looks it up first', async () => {
    await send(3);
    const [row] = await dueRows(db, 'default', 10);
    expect(await claimAttempt(db, row?.id ?? 0, 'default')).toEqual({
      attempt: 1,
      wasInDoubt: false,
      sentThrough: null,
      traceparent: null,
    });
    await client.createPrescription(samplePrescription(3, { prefix: 'obx' })); // the request that landed
    await deliverDue();
    expect((await rows()).map((r) => [r.state, r.attempts, r.response_status])).toEqual([['delivered', 2, 200]]);
    expect(await ledger('obx-3')).toEqual({ created: 1, duplicates_refused: 0, cancellations: 0 });
  });

  test('in doubt, but the operator holds somebody else’s prescription under the id: failed, not delivered', async () => {
    await client.createPrescription({ ...samplePrescription(4, { prefix: 'obx' }), written_date: '2020-01-01' });
    await send(4);
    const [row] = await dueRows(db, 'default', 10);
    await claimAttempt(db, row?.id ?? 0, 'default');
    await deliverDue();
    const [settled] = await rows();
    expect(settled).toMatchObject({ state: 'failed', response_status: 422 });
    expect(settled?.last_error).toBe('422 from the operator: prescription.external_id has already been taken (by another prescription)');
    expect(await listLocalPrescriptions(db)).toEqual([]);
  });

  test('5xx: pending, in doubt, retried after its backoff; then delivered once', async () => {
    sandbox.setFaults({ errorRate: 1 });
    await send(5);
    await deliverDue();
    const [pending] = await rows();
    expect(pending).toMatchObject({ state: 'pending', attempts: 1, in_doubt: true });
    expect(String(pending?.last_error)).toMatch(/^50[023] from the operator$/);
    expect(await deliverDue()).toBe(0); // waiting out its backoff
    const [stats] = [await readOutboxStats(db)];
    expect(stats.pending).toBe(1);
    sandbox.setFaults({ errorRate: 0 });
    await run(`update intake_sync.outbox set next_attempt_at = now()`);
    await deliverDue();
    expect((await rows()).map((r) => [r.state, r.attempts, r.response_status])).toEqual([['delivered', 2, 201]]);
    expect(await ledger('obx-5')).toEqual({ created: 1, duplicates_refused: 0, cancellations: 0 });
  });

  test('a cancel the operator does not know: failed "not found at the operator"', async () => {
    await cancel('obx-unknown');
    await deliverDue();
    expect((await rows()).map((r) => [r.state, r.last_error, r.response_status])).toEqual([['failed', 'not found at the operator', 404]]);
  });

  test('a cancel behind a failed send fails with the reason; a body the client refuses fails without a request', async () => {
    await run(`insert into intake_sync.outbox (external_id, kind, body) values ('obx-6', 'send', '{"external_id": "obx-6"}')`);
    await cancel('obx-6');
    await deliverDue();
    await deliverDue();
    const settled = await rows();
    expect(settled.map((r) => [r.kind, r.state])).toEqual([
      ['send', 'failed'],
      ['cancel', 'failed'],
    ]);
    expect(String(settled[0]?.last_error)).toMatch(/^refused by the client before sending: invalid prescription\.written_date/);
    expect(settled[1]?.last_error).toBe(`its send (outbox row ${String(settled[0]?.id)}) failed: nothing to cancel at the operator`);
    expect(await ledger('obx-6')).toBeUndefined();
  });

  test('rows of one external_id go in id order; other ids are not held up', async () => {
    sandbox.setFaults({ errorRate: 1 });
    await send(7);
    await cancel('obx-7');
    await send(8);
    expect((await dueRows(db, 'default', 10)).map((r) => [r.externalId, r.kind])).toEqual([
      ['obx-7', 'send'],
      ['obx-8', 'send'],
    ]);
    await deliverDue(); // both sends fail and back off
    expect(await dueRows(db, 'default', 10)).toEqual([]); // the cancel still waits behind its send
  });

  test('the loop stops promptly with a request in flight; the row stays in doubt for the next leader', async () => {
    sandbox.setFaults({ hangRate: 1 });
    await send(9);
    const loop = new OutboxLoop({
      delivery: deps(),
      sleep: sleepUnlessAborted,
      idleMs: 50,
      maxBackoffMs: 200,
      concurrency: 2,
      batchSize: 10,
      log: silent,
    });
    const running = loop.run();
    await waitFor(async () => Number((await rows())[0]?.attempts) >= 1, { timeoutMs: 20_000, what: 'the loop to claim the row' });
    // the request hangs for ever: stop() returning at all proves it aborted the request in flight
    await loop.stop();
    await running;
    expect((await rows()).map((r) => [r.state, r.in_doubt, r.attempts])).toEqual([['pending', true, 1]]);
  });

  test('the loop delivers what is queued while it runs', async () => {
    const loop = new OutboxLoop({
      delivery: deps(),
      sleep: sleepUnlessAborted,
      idleMs: 20,
      maxBackoffMs: 200,
      concurrency: 4,
      batchSize: 10,
      log: silent,
    });
    const running = loop.run();
    for (let i = 10; i < 20; i++) await send(i);
    await waitFor(async () => (await readOutboxStats(db)).pending === 0, { timeoutMs: 20_000, what: 'the loop to deliver the rows' });
    await loop.stop();
    await running;
    expect(new Set((await rows()).map((r) => r.state))).toEqual(new Set(['delivered']));
    expect(await listLocalPrescriptions(db)).toHaveLength(10);
  });
});
