import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import type { PrescriptionRequest } from '../../src/intake/prescription.js';
import { sampleIdentity, samplePrescription } from '../../src/sandbox/fixtures.js';
import { listFeedSources, retireSource } from '../../src/sync/version-migration/feed-sources.js';
import { deliverRow, type OutboxDeliveryDeps } from '../../src/sync/outbox/delivery.js';
import { dueRows } from '../../src/sync/outbox/store.js';
import { postgresReachable } from '../support/db.js';
import {
  cliProcess,
  FEED,
  finished,
  migrate,
  MINUTE,
  operatorSubscriptions,
  progress,
  rows,
  runMigrationWorker,
  sendThroughV1,
  sourceStates,
  startMigrationWorld,
  stopMigrationWorld,
  tenantOf,
  V1,
  V2,
  type MigrationWorld,
} from '../support/process/migration-world.js';
import { waitFor } from '../support/wait-for.js';

/**
 * Subscriptions created through the OLD version after a migration started: the outbox claim fixes the
 * URL it sends through from the database under the source lock, a send in flight through the old URL
 * joins the migration's set (and keeps the old source from retiring), and the CLI's creating commands
 * go through the feed's current source while the old URL is still configured.
 */
const silent = pino({ level: 'silent' });
const hasPostgres = await postgresReachable();

type World = MigrationWorld;
let world: World | undefined;
const start = async (label: string) => (world = await startMigrationWorld(label));
afterEach(async () => {
  await stopMigrationWorld(world);
  world = undefined;
});

/** The worker with its outbox, configured with the old URL and never told anything about the sources. */
const runWorker = (w: World) => runMigrationWorker(w, { outbox: true });
/** Sent through V1 before the migration, recorded with its subscription. */
const sendKnown = (w: World, request: PrescriptionRequest) => sendThroughV1(w, request, true);
const clientOfUrl = (w: World) => w.clientOfUrl;

/** The outbox's delivery of one feed, without a worker (so without any load of the sources). */
const delivery = (w: World): OutboxDeliveryDeps => ({
  db: w.test.database.db,
  feed: FEED,
  client: w.client(V1),
  configuredBaseUrl: w.sandbox.baseUrlFor(V1),
  clientFor: clientOfUrl(w),
  backoff: { baseMs: 60_000, capMs: 60_000 },
  random: () => 0.5,
  log: silent,
});

async function deliverDue(w: World): Promise<void> {
  for (const row of await dueRows(w.test.database.db, FEED, 10)) await deliverRow(delivery(w), row, new AbortController().signal);
}

const enqueue = (w: World, request: PrescriptionRequest) =>
  w.test.database.db.execute(sql`select intake_sync.send_prescription(${JSON.stringify(request)}::jsonb)`);
const outboxRows = (w: World) =>
  rows<{ external_id: string; state: string; sent_through: string | null }>(
    w,
    sql`select external_id, state, sent_through from intake_sync.outbox order by id`,
  );

describe.skipIf(!hasPostgres)('a migration and the subscriptions created through the old version', () => {
  it('(a) an outbox send through the old URL in flight at the start joins the set; the old source retires only after a rerun moved it', async () => {
    const w = await start('vm_late_inflight');
    await sendKnown(w, samplePrescription(0, { prefix: 'lj' }));
    w.clock.advance(5 * MINUTE);
    runWorker(w);

    // the outbox's POST of lj-1 through V1: applied by the operator, its answer held
    const inFlight = w.sandbox.hold({ method: 'POST', resource: 'prescriptions', version: V1, nth: 1, phase: 'after' });
    await enqueue(w, samplePrescription(1, { prefix: 'lj' }));
    await inFlight.reached;
    expect(await outboxRows(w)).toEqual([{ external_id: 'lj-1', state: 'pending', sent_through: w.sandbox.baseUrlFor(V1) }]);

    // the migration moves its fixed set, but lj-1 (not local yet) keeps it open
    const first = await finished(migrate(w, ['--json']));
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ prescriptions: 1, created: 1, cancelled: 1, awaiting_send: 1, complete: false });
    expect(await progress(w)).toEqual(['lj-0:done', 'lj-1:pending']);

    inFlight.release();
    await waitFor(async () => (await outboxRows(w))[0]?.state === 'delivered', { timeoutMs: 10_000, what: "lj-1's send delivered" });
    expect(operatorSubscriptions(w)['lj-1']).toEqual([`${V1}:active`]);

    // its accepted event comes under V1 (its automatic subscription): V1 is still read, and not retired
    w.clock.advance(5 * MINUTE);
    await waitFor(
      async () =>
        (
          await rows(
            w,
            sql`select 1 from intake_sync.events e join intake_sync.prescriptions p on p.id = e.prescription_id
          where p.external_id = 'lj-1' and e.api_version = ${V1}`,
          )
        ).length === 1,
      { timeoutMs: 10_000, what: "lj-1's V1 event" },
    );
    const polled = w.sandbox.store.apiRequests.get(V1)?.get('events') ?? 0;
    await waitFor(() => (w.sandbox.store.apiRequests.get(V1)?.get('events') ?? 0) > polled + 5, {
      timeoutMs: 10_000,
      what: 'more V1 polls',
    });
    expect(await sourceStates(w)).toEqual([`${V1}:draining`, `${V2}:current`]);

    const rerun = await finished(migrate(w, ['--json']));
    expect(rerun.code).toBe(0);
    expect(JSON.parse(rerun.stdout)).toMatchObject({
      prescriptions: 2,
      already_done: 1,
      created: 1,
      cancelled: 1,
      awaiting_send: 0,
      complete: true,
    });
    expect(await progress(w)).toEqual(['lj-0:done', 'lj-1:done']);
    await waitFor(async () => (await sourceStates(w)).includes(`${V1}:retired`), { timeoutMs: 10_000, what: 'V1 retired' });
    expect(operatorSubscriptions(w)).toEqual({ 'lj-0': [`${V1}:cancelled`, `${V2}:active`], 'lj-1': [`${V1}:cancelled`, `${V2}:active`] });
  }, 60_000);

  it('(b) an outbox send claimed after the start goes through the new URL, with no worker ever told of the sources', async () => {
    const w = await start('vm_late_claim');
    await sendKnown(w, samplePrescription(0, { prefix: 'nc' }));
    expect((await finished(migrate(w))).code).toBe(0);

    await enqueue(w, samplePrescription(1, { prefix: 'nc' }));
    await deliverDue(w);
    expect(await outboxRows(w)).toEqual([{ external_id: 'nc-1', state: 'delivered', sent_through: w.sandbox.baseUrlFor(V2) }]);
    expect(operatorSubscriptions(w)['nc-1']).toEqual([`${V2}:active`]);
  }, 60_000);

  it('(c) prescriptions send and subscriptions create after the start, the old URL still configured, create at the new version', async () => {
    const w = await start('vm_late_cli');
    await sendKnown(w, samplePrescription(0, { prefix: 'cs' }));
    expect((await finished(migrate(w))).code).toBe(0);
    w.dir = mkdtempSync(join(tmpdir(), 'vm-late-cli-'));
    const prescriptionFile = join(w.dir, 'p.json');
    writeFileSync(prescriptionFile, JSON.stringify({ prescription: samplePrescription(1, { prefix: 'cs' }) }));
    const subscriptionFile = join(w.dir, 's.json');
    writeFileSync(subscriptionFile, JSON.stringify(sampleIdentity(700)));

    const sent = await finished(cliProcess(w, ['prescriptions', 'send', prescriptionFile, '--json']));
    expect(sent.code).toBe(0);
    expect(operatorSubscriptions(w)['cs-1']).toEqual([`${V2}:active`]);
    expect(await rows(w, sql`select 1 from intake_sync.prescriptions where external_id = 'cs-1'`)).toHaveLength(1);

    const created = await finished(cliProcess(w, ['subscriptions', 'create', subscriptionFile, '--json']));
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ api_version: V2 });
  }, 60_000);

  it('(e) a CLI prescriptions send through the old URL in flight while a migration starts and completes joins it; the old source is read again until a rerun moves it', async () => {
    const w = await start('vm_late_cli_send');
    await sendKnown(w, samplePrescription(0, { prefix: 'cf' }));
    runWorker(w);
    w.dir = mkdtempSync(join(tmpdir(), 'vm-late-cli-send-'));
    const file = join(w.dir, 'p.json');
    writeFileSync(file, JSON.stringify({ prescription: samplePrescription(1, { prefix: 'cf' }) }));

    // the CLI's POST through V1 (no source recorded yet: the configured URL) is applied, its answer held
    const held = w.sandbox.hold({ method: 'POST', resource: 'prescriptions', version: V1, nth: 1, phase: 'after' });
    const sending = cliProcess(w, ['prescriptions', 'send', file, '--json']);
    await Promise.race([
      held.reached,
      sending.exited.then((code) => Promise.reject(new Error(`send exited ${String(code)} before the hold`))),
    ]);
    // meanwhile a whole migration: cf-1 is not local, so not in its set; V1 retires
    const first = await finished(migrate(w, ['--json']));
    expect(JSON.parse(first.stdout)).toMatchObject({ prescriptions: 1, complete: true });
    await waitFor(async () => (await sourceStates(w)).includes(`${V1}:retired`), { timeoutMs: 10_000, what: 'V1 retired' });

    held.release();
    const sent = await finished(sending);
    expect(sent.code).toBe(0);
    expect(sent.stderr).toContain(
      `external_id cf-1 was sent through ${w.sandbox.baseUrlFor(V1)} while feed default moved to another version`,
    );
    expect(await sourceStates(w)).toEqual([`${V1}:draining`, `${V2}:current`]);
    expect(await progress(w)).toEqual(['cf-0:done', 'cf-1:pending']);

    // its accepted event comes under V1 only (its automatic subscription): the reopened source is read again
    w.clock.advance(5 * MINUTE);
    await waitFor(
      async () =>
        (
          await rows(
            w,
            sql`select 1 from intake_sync.events e join intake_sync.prescriptions p on p.id = e.prescription_id
          where p.external_id = 'cf-1' and e.api_version = ${V1}`,
          )
        ).length === 1,
      { timeoutMs: 10_000, what: "cf-1's V1 event" },
    );
    const rerun = await finished(migrate(w, ['--json']));
    expect(rerun.code).toBe(0);
    expect(JSON.parse(rerun.stdout)).toMatchObject({ created: 1, cancelled: 1, complete: true });
    expect(operatorSubscriptions(w)['cf-1']).toEqual([`${V1}:cancelled`, `${V2}:active`]);
    await waitFor(async () => (await sourceStates(w)).includes(`${V1}:retired`), { timeoutMs: 10_000, what: 'V1 retired again' });
  }, 60_000);

  it('(f) prescriptions import --subscribe across a migration: each subscription is created at the source current then; one created through the old one joins the migration', async () => {
    const w = await start('vm_late_import');
    runWorker(w);
    w.dir = mkdtempSync(join(tmpdir(), 'vm-late-import-'));
    const file = join(w.dir, 'import.ndjson');
    const identities = [1, 2, 3].map((i) => sampleIdentity(800 + i));
    writeFileSync(
      file,
      identities.map((identity, i) => JSON.stringify({ external_id: `im-${i + 1}`, prescription_identity: identity })).join('\n'),
    );
    const subscriptionsOf = (i: number) =>
      [...tenantOf(w).subscriptions.values()]
        .filter(
          (s) =>
            s.identity.patient_first_name === identities[i]!.patient_first_name && s.identity.patient_dob === identities[i]!.patient_dob,
        )
        .map((s) => `${s.apiVersion}:${s.cancelledAt === null ? 'active' : 'cancelled'}`)
        .sort();

    // im-2's POST through V1 is applied, its answer held; meanwhile a migration starts and moves what it can
    const held = w.sandbox.hold({ method: 'POST', resource: 'subscriptions', version: V1, nth: 2, phase: 'after' });
    const importing = cliProcess(w, ['prescriptions', 'import', file, '--subscribe', '--json']);
    await Promise.race([
      held.reached,
      importing.exited.then((code) => Promise.reject(new Error(`import exited ${String(code)} before the hold`))),
    ]);
    const first = await finished(migrate(w, ['--json']));
    expect(JSON.parse(first.stdout)).toMatchObject({ prescriptions: 3, complete: false });
    // im-1 moved; im-2 and im-3 got their V2 subscription and await an old one
    expect(await progress(w)).toEqual(['im-1:done', 'im-2:awaiting_old_subscription', 'im-3:awaiting_old_subscription']);

    held.release();
    const imported = await finished(importing);
    expect(imported.code).toBe(0);
    // im-2's V1 subscription joined with its id; im-3 already had its V2 one: not subscribed again
    expect(imported.stderr).toContain('1 subscription(s) were created through a source feed default moved away from meanwhile (im-2)');
    expect(await progress(w)).toEqual(['im-1:done', 'im-2:created', 'im-3:awaiting_old_subscription']);
    const recorded = await rows<{ external_id: string; subscription_id: string }>(
      w,
      sql`select external_id, subscription_id from intake_sync.prescriptions order by external_id`,
    );
    for (const r of recorded) expect(tenantOf(w).subscriptions.get(r.subscription_id)).toMatchObject({ apiVersion: V2, cancelledAt: null });

    // the rerun cancels im-2's V1 subscription at once; im-3 never had one at V1: released
    const rerun = await finished(migrate(w, ['--release-awaiting', '--json']));
    expect(JSON.parse(rerun.stdout)).toMatchObject({ cancelled: 1, released: 1, complete: true });
    expect([0, 1, 2].map(subscriptionsOf)).toEqual([
      [`${V1}:cancelled`, `${V2}:active`],
      [`${V1}:cancelled`, `${V2}:active`],
      [`${V2}:active`],
    ]);
    await waitFor(async () => (await sourceStates(w)).includes(`${V1}:retired`), { timeoutMs: 10_000, what: 'V1 retired' });
  }, 60_000);

  it('(d) a send through the old URL that finally fails does not keep the migration open; a send with no progress row keeps the old source', async () => {
    const w = await start('vm_late_failed');
    await sendKnown(w, samplePrescription(0, { prefix: 'fd' }));
    // the operator already holds somebody else's prescription under fd-1: our send is refused (422)
    await w.client(V1).createPrescription({ ...samplePrescription(1, { prefix: 'fd' }), written_date: '2020-01-01' });
    await enqueue(w, samplePrescription(1, { prefix: 'fd' }));
    const held = w.sandbox.hold({ method: 'POST', resource: 'prescriptions', version: V1, nth: 1, phase: 'before' });
    const delivering = deliverDue(w);
    await held.reached;

    const first = await finished(migrate(w, ['--json']));
    expect(JSON.parse(first.stdout)).toMatchObject({ awaiting_send: 1, complete: false });
    held.release();
    await delivering;
    expect(await outboxRows(w)).toMatchObject([{ external_id: 'fd-1', state: 'failed', sent_through: w.sandbox.baseUrlFor(V1) }]);

    const rerun = await finished(migrate(w, ['--json']));
    expect(rerun.code).toBe(0);
    expect(JSON.parse(rerun.stdout)).toMatchObject({ awaiting_send: 0, complete: true });
    expect(await progress(w)).toEqual(['fd-0:done', 'fd-1:not_sent']);

    // the guard: a send in flight through V1 that no progress row covers reopens the migration instead of retiring V1
    await w.test.database.db.execute(sql`insert into intake_sync.outbox (external_id, kind, body, sent_through, attempts, in_doubt)
      values ('fd-2', 'send', '{}'::jsonb, ${w.sandbox.baseUrlFor(V1)}, 1, true)`);
    const draining = (await listFeedSources(w.test.database.db, FEED)).find((s) => s.state === 'draining')!;
    expect(await retireSource(w.test.database.db, FEED, draining.baseUrl, draining.version)).toBe(false);
    expect((await listFeedSources(w.test.database.db, FEED)).find((s) => s.apiVersion === V1)).toMatchObject({
      state: 'draining',
      migrationCompletedAt: null,
    });
  }, 60_000);
});
