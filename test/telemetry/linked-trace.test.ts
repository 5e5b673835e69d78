import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connection.js';
import { IntakeClient } from '../../src/intake/client.js';
import { ManualClock } from '../../src/sandbox/clock.js';
import { SANDBOX_STEP_MS } from '../../src/sandbox/rules.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { deliverRow } from '../../src/sync/outbox/delivery.js';
import { dueRows } from '../../src/sync/outbox/store.js';
import type { Telemetry } from '../../src/telemetry/start.js';
import { canaryPatient } from '../support/faults/canary-fixtures.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import type { DecodedSpan } from '../support/telemetry/otlp-protobuf.js';
import type { OtlpReceiver } from '../support/telemetry/otlp-receiver.js';
import { capturedLogger, changes, drainFeed, needlesIn, tracingTo } from '../support/telemetry/traced-world.js';

// Issue 38 §3 and §6: one prescription followed across its asynchronous hops, with tracing on and a
// real OTLP/HTTP receiver (protobuf): the app's transaction that called send_prescription → the outbox
// delivery (linked to it) and its POST /prescriptions → the poll and the page that applied its event
// (linked to the delivery) → the status change carrying the page's trace id, which status_changes_since
// returns. The patient is a canary: none of its PHI may be in any byte exported or logged.

const onPostgres = await postgresReachable();
const APP_TRACE = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
const APP_SPAN = '0123456789abcdef';
const APP_TRACEPARENT = `00-${APP_TRACE}-${APP_SPAN}-01`;

let tdb: TestDatabase;
let db: Db;
let sandbox: Sandbox;
let receiver: OtlpReceiver;
let telemetry: Telemetry;

beforeAll(async () => {
  if (!onPostgres) return;
  ({ receiver, telemetry } = await tracingTo('http/protobuf'));
  tdb = await createTestDatabase('otel_linked_trace');
  db = tdb.database.db;
  sandbox = await startSandbox({ clock: new ManualClock() });
});
afterAll(async () => {
  if (!onPostgres) return;
  await telemetry.shutdown();
  await sandbox.close();
  await tdb.drop();
  await receiver.close();
});

const one = (spans: DecodedSpan[], name: string) => {
  const found = spans.filter((s) => s.name === name);
  expect(
    found.map((s) => s.name),
    `one span named ${name}`,
  ).toEqual([name]);
  return found[0] as DecodedSpan;
};

describe.skipIf(!onPostgres)(`one prescription across its hops (${NEEDS_POSTGRES})`, () => {
  it('app transaction → delivery → page → status change: a linked span tree, the change carries the page trace, no PHI', async () => {
    const patient = canaryPatient(1);
    const credential = sandbox.credentials[0] ?? { key: '', secret: '' };
    const { log, lines } = capturedLogger();
    // the app: its own transaction, its own trace
    await db.transaction(async (tx) => {
      await tx.execute(sql`select pg_catalog.set_config('intake_sync.traceparent', ${APP_TRACEPARENT}::text, true)`);
      await tx.execute(sql`select intake_sync.send_prescription(${JSON.stringify(patient.prescription)}::text::jsonb)`);
    });
    // the leader's delivery
    const client = new IntakeClient({ baseUrl: sandbox.baseUrl, apiKey: credential.key, apiSecret: credential.secret, logger: log });
    const deps = { db, feed: 'default', client, backoff: { baseMs: 60_000, capMs: 60_000 }, random: () => 0.5, log };
    for (const row of await dueRows(db, 'default', 10)) await deliverRow(deps, row, new AbortController().signal);
    // the operator accepts it 5 minutes later; the poller applies the event
    (sandbox.clock as ManualClock).advance(SANDBOX_STEP_MS);
    await drainFeed(db, sandbox.baseUrl, credential, log);
    const [change] = await changes(db);
    await telemetry.flush();
    const spans = receiver.spans();

    const delivery = one(spans, 'process outbox');
    expect(delivery.kind).toBe(5); // CONSUMER
    expect(delivery.parentSpanId).toBe('');
    expect(delivery.links).toEqual([{ traceId: APP_TRACE, spanId: APP_SPAN, attributes: { 'intake_sync.link.kind': 'app' } }]);
    expect(delivery.attributes).toMatchObject({
      'messaging.system': 'intake_sync',
      'messaging.operation.type': 'process',
      'messaging.destination.name': 'outbox',
      'intake_sync.outbox.outcome': 'delivered',
      'http.response.status_code': 201,
    });
    const post = one(spans, 'POST /prescriptions');
    expect(post).toMatchObject({ kind: 3, traceId: delivery.traceId, parentSpanId: delivery.spanId });
    expect(post.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.template': '/prescriptions',
      'server.address': '127.0.0.1',
    });
    expect(String(post.attributes['url.full'])).toBe(`${sandbox.baseUrl}/prescriptions`);

    const page = spans.find((s) => s.name === 'intake_sync.page apply' && s.attributes['intake_sync.page.status_changes'] === 1);
    expect(page, 'the page that applied the accepted event').toBeDefined();
    const poll = spans.find((s) => s.spanId === page?.parentSpanId);
    expect(poll?.name).toBe('intake_sync.poll');
    expect(poll?.attributes).toMatchObject({ 'intake_sync.feed': 'default', 'intake_sync.page.limit': 50 });
    const get = spans.find((s) => s.name === 'GET /events' && s.parentSpanId === poll?.spanId);
    expect(get?.attributes).toMatchObject({ 'http.request.method': 'GET', 'url.template': '/events' });
    expect(page?.attributes).toMatchObject({ 'intake_sync.page.events': 1, 'intake_sync.page.matched': 1, 'db.system.name': 'postgresql' });
    expect(page?.links).toEqual([
      { traceId: delivery.traceId, spanId: delivery.spanId, attributes: { 'intake_sync.link.kind': 'delivery' } },
    ]);

    // the change feed hands the page's trace to the app's follower
    expect(change).toMatchObject({ external_id: patient.prescription.external_id, new_status: 'accepted', trace_id: page?.traceId });
    // log lines written inside a span carry its ids
    const delivered = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'outbox row delivered');
    expect(delivered).toMatchObject({ trace_id: delivery.traceId, span_id: delivery.spanId });
    // no PHI, no credential anywhere
    const needles = [...patient.needles, { label: 'api secret', value: credential.secret }];
    expect(needlesIn(receiver.bodies(), needles)).toEqual([]);
    expect(needlesIn(lines, needles)).toEqual([]);
    expect(receiver.contentTypes().every((t) => t === 'application/x-protobuf')).toBe(true);
  });
});
