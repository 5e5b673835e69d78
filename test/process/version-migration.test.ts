import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import type { IntakeClient } from '../../src/intake/client.js';
import { RequestTimeoutError } from '../../src/intake/errors/request-timeout-error.js';
import { samplePrescription } from '../../src/sandbox/fixtures.js';
import type { VersionListing } from '../../src/sandbox/versions.js';
import { listFeedSources } from '../../src/sync/version-migration/feed-sources.js';
import { recordSentPrescription } from '../../src/sync/matching/sent-prescriptions.js';
import { resolveMigrationTarget } from '../../src/operations/version-migration/migration-target.js';
import { migrateSubscriptions } from '../../src/operations/version-migration/subscription-migration.js';
import { postgresReachable } from '../support/db.js';
import {
  FEED,
  MINUTE,
  operatorSubscriptions,
  rows,
  runMigrationWorker,
  sourceStates,
  startMigrationWorld,
  stopMigrationWorld,
  V1,
  V2,
  type MigrationWorld,
} from '../support/process/migration-world.js';
import { waitFor } from '../support/wait-for.js';

const COUNT = 6;
const hasPostgres = await postgresReachable();

type World = MigrationWorld;
let world: World | undefined;
const start = async (listing: VersionListing, label: string) => (world = await startMigrationWorld(label, listing));
afterEach(async () => {
  await stopMigrationWorld(world);
  world = undefined;
});
const runWorker = (w: World) => runMigrationWorker(w);

const localStatuses = (w: World) =>
  rows<{ external_id: string; status: string | null }>(
    w,
    sql`select external_id, status from intake_sync.prescriptions order by external_id`,
  );
const allAt = (w: World, status: string) => async () => (await localStatuses(w)).every((p) => p.status === status);

// as the CLI does: from the recorded sources, so a rerun resumes (kind 'resume') instead of starting again
const target = async (w: World) =>
  resolveMigrationTarget(FEED, w.sandbox.baseUrlFor(V1), await listFeedSources(w.test.database.db, FEED), w.sandbox.baseUrlFor(V2));

describe.skipIf(!hasPostgres).each<VersionListing>(['separate', 'shared'])('API version migration, %s listing', (listing) => {
  it('moves every subscription while the worker runs and statuses move on; a crash resumes; the old source retires once drained', async () => {
    const w = await start(listing, `version_migration_${listing}`);
    const db = w.test.database.db;
    for (let i = 0; i < COUNT; i++) {
      const request = samplePrescription(i, { prefix: 'vm' });
      await recordSentPrescription(db, request, await w.client(V1).createPrescription(request));
    }
    w.clock.advance(5 * MINUTE); // accepted, under V1: the subscriptions become known locally
    runWorker(w);
    await waitFor(allAt(w, 'accepted'), { timeoutMs: 10_000, what: 'accepted everywhere' });

    // a dry run writes and sends nothing
    const before = operatorSubscriptions(w);
    const dry = await migrateSubscriptions({
      db,
      feed: FEED,
      target: await target(w),
      newClient: w.client(V2),
      oldClient: w.client(V1),
      dryRun: true,
      by: 'test',
    });
    expect(dry).toMatchObject({ dry_run: true, prescriptions: COUNT, external_ids: [...Array(COUNT).keys()].map((i) => `vm-${i}`) });
    expect(await sourceStates(w)).toEqual([]);
    expect(await rows(w, sql`select * from intake_sync.subscription_migrations`)).toEqual([]);
    expect(operatorSubscriptions(w)).toEqual(before);

    // the third POST times out after the operator created it (unknown outcome): the run stops
    let posts = 0;
    const flaky = {
      createSubscription: async (...args: Parameters<IntakeClient['createSubscription']>) => {
        const created = await w.client(V2).createSubscription(...args);
        if (++posts === 3) throw new RequestTimeoutError({ method: 'POST', path: '/subscriptions' }, 1_000);
        return created;
      },
    };
    await expect(
      migrateSubscriptions({
        db,
        feed: FEED,
        target: await target(w),
        newClient: flaky,
        oldClient: w.client(V1),
        dryRun: false,
        by: 'test',
      }),
    ).rejects.toThrow(/external_id vm-2 failed \(it may have been created/);
    const progress = await rows<{ external_id: string; state: string }>(
      w,
      sql`select external_id, state from intake_sync.subscription_migrations order by external_id`,
    );
    expect(progress.map((p) => p.state)).toEqual(['done', 'done', 'creating', 'pending', 'pending', 'pending']);
    expect(await sourceStates(w)).toEqual([`${V1}:draining`, `${V2}:current`]);

    // statuses move on meanwhile: ordered is published under V1 for all, and under V2 for the three created
    w.clock.advance(5 * MINUTE);
    await waitFor(allAt(w, 'ordered'), { timeoutMs: 10_000, what: 'ordered everywhere' });
    await waitFor(
      async () => (await rows(w, sql`select 1 from intake_sync.events where api_version = ${V2} and name = 'ordered'`)).length === 3,
      {
        timeoutMs: 10_000,
        what: 'the V2 copies of ordered',
      },
    );

    // the rerun adopts vm-2's subscription from its stored V2 event instead of sending again, and finishes
    const rerun = await migrateSubscriptions({
      db,
      feed: FEED,
      target: await target(w),
      newClient: w.client(V2),
      oldClient: w.client(V1),
      dryRun: false,
      by: 'test',
    });
    expect(rerun).toMatchObject({
      prescriptions: COUNT,
      already_done: 2,
      adopted: 1,
      created: 3,
      duplicate_possible: 0,
      cancelled: 4,
      complete: true,
    });
    for (const subs of Object.values(operatorSubscriptions(w))) expect(subs).toEqual([`${V1}:cancelled`, `${V2}:active`]);
    const recorded = await rows<{ subscription_id: string }>(w, sql`select subscription_id from intake_sync.prescriptions`);
    expect(new Set(recorded.map((r) => r.subscription_id)).size).toBe(COUNT);

    // the worker retires V1 after a poll of it that started after completion reached the end
    await waitFor(async () => (await sourceStates(w)).includes(`${V1}:retired`), { timeoutMs: 10_000, what: 'V1 retired' });
    const polledV1 = w.sandbox.store.apiRequests.get(V1)?.get('events') ?? 0;

    // the rest of the lifecycle comes under V2 only; an event of an unknown version is held
    w.clock.advance(10 * MINUTE);
    await w.client(V2).listEvents({}); // publishes what is due
    const future = {
      id: 'evt_future_1',
      name: 'delivered',
      prescription_identity: {},
      pharmacy_npi: '1689411712',
      occurred_at: '2025-01-01T00:20:00Z',
      api_version: '2026-01-01',
      subscription_id: 'sub_x',
      payload: {},
    };
    future.prescription_identity = JSON.parse(
      JSON.stringify((await rows<{ raw: any }>(w, sql`select raw from intake_sync.events limit 1`))[0]!.raw.prescription_identity),
    );
    w.sandbox.store.injectRawEvents(w.sandbox.credentials[0]!.key, [future], V2);
    await waitFor(allAt(w, 'delivered'), { timeoutMs: 10_000, what: 'delivered everywhere' });
    await waitFor(
      async () =>
        (await rows(w, sql`select 1 from intake_sync.quarantine where reason = 'unsupported_version' and event_id = 'evt_future_1'`))
          .length === 1,
      {
        timeoutMs: 10_000,
        what: 'the 2026-01-01 event quarantined',
      },
    );
    const polledV2 = w.sandbox.store.apiRequests.get(V2)?.get('events') ?? 0;
    await waitFor(() => (w.sandbox.store.apiRequests.get(V2)?.get('events') ?? 0) > polledV2 + 5, {
      timeoutMs: 10_000,
      what: 'more V2 polls',
    });
    expect(w.sandbox.store.apiRequests.get(V1)?.get('events') ?? 0).toBe(polledV1);

    // no status regressed, nothing applied twice: each (prescription, status) once, in lifecycle order
    const changes = await rows<{ external_id: string; statuses: string }>(
      w,
      sql`select external_id, string_agg(new_status, ',' order by id) as statuses from intake_sync.status_changes group by external_id order by external_id`,
    );
    expect(changes).toEqual(
      [...Array(COUNT).keys()].map((i) => ({ external_id: `vm-${i}`, statuses: 'accepted,ordered,dispensed,delivered' })),
    );
  }, 60_000);
});

describe('resolveMigrationTarget: bad arguments are named, before anything is written', () => {
  const FROM = 'https://op.example/intake_api/2024-12-10';
  it.each([
    ['https://op.example/intake_api/latest', /names no API version/],
    ['https://op.example/intake_api/2026-01-01', /API version 2026-01-01 is not one this build reads \(2024-12-10, 2025-06-01\)/],
    ['https://op.example/intake_api/2024-12-10', /the feed already reads API version 2024-12-10/],
  ])('%s', (to, message) => {
    expect(() => resolveMigrationTarget(FEED, FROM, [], to)).toThrow(message);
    expect(() => resolveMigrationTarget(FEED, FROM, [], to)).toThrow(expect.objectContaining({ name: 'MigrationArgumentError' }));
  });

  it('resumes the same migration, refuses another while one drains', () => {
    const recorded = [
      { baseUrl: FROM, apiVersion: V1, state: 'draining' as const },
      { baseUrl: 'https://op.example/intake_api/2025-06-01', apiVersion: V2, state: 'current' as const },
    ];
    expect(resolveMigrationTarget(FEED, FROM, recorded, 'https://op.example/intake_api/2025-06-01/')).toMatchObject({ kind: 'resume' });
    expect(() => resolveMigrationTarget(FEED, FROM, recorded, 'https://other.example/intake_api/2024-12-10')).toThrow(/still under way/);
  });
});
