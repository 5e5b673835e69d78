import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { sampleIdentity, samplePrescription } from '../../src/sandbox/fixtures.js';
import { registerLocalPrescriptions } from '../../src/sync/matching/local-prescriptions.js';
import { recordSentPrescription } from '../../src/sync/matching/sent-prescriptions.js';
import { postgresReachable } from '../support/db.js';
import {
  cliProcess,
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
 * `subscriptions migrate` as the operator runs it: a CLI process against the simulator (two versions,
 * separate listings) and a test database, killed mid-migration, rerun, and its output read.
 */
const hasPostgres = await postgresReachable();

let world: MigrationWorld | undefined;
const start = async (label: string) => (world = await startMigrationWorld(label));
afterEach(async () => {
  await stopMigrationWorld(world);
  world = undefined;
});
const runWorker = (w: MigrationWorld) => runMigrationWorker(w);
const send = sendThroughV1;
type World = MigrationWorld;

const requestCounts = (w: World) => JSON.stringify(w.sandbox.store.stats().api_requests);

describe.skipIf(!hasPostgres)('subscriptions migrate as a process', () => {
  it('killed with SIGKILL while a POST is in flight, then between prescriptions, resumes from its progress rows', async () => {
    const w = await start('vm_process_crash');
    for (let i = 0; i < 5; i++) await send(w, samplePrescription(i, { prefix: 'cm' }), true);
    w.clock.advance(5 * MINUTE); // accepted under V1
    runWorker(w);

    // 1. the third POST /subscriptions is applied by the operator, its answer held: the kill lands while it is in flight
    const inFlight = w.sandbox.hold({ method: 'POST', resource: 'subscriptions', version: V2, nth: 3, phase: 'after' });
    const first = migrate(w);
    await Promise.race([
      inFlight.reached,
      first.exited.then((code) => Promise.reject(new Error(`migrate exited ${String(code)} before the hold`))),
    ]);
    // 'creating' was committed before the request was sent
    expect(await progress(w)).toEqual(['cm-0:done', 'cm-1:done', 'cm-2:creating', 'cm-3:pending', 'cm-4:pending']);
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    inFlight.release();
    expect(await sourceStates(w)).toEqual([`${V1}:draining`, `${V2}:current`]);
    // the operator holds cm-2's new subscription, which we never recorded
    expect(operatorSubscriptions(w)['cm-2']).toEqual([`${V1}:active`, `${V2}:active`]);

    // ordered comes under both versions; the worker stores cm-2's V2 copy, which names its unrecorded subscription
    w.clock.advance(5 * MINUTE);
    await waitFor(
      async () => (await rows(w, sql`select 1 from intake_sync.events where api_version = ${V2} and name = 'ordered'`)).length === 3,
      {
        timeoutMs: 10_000,
        what: 'the V2 ordered events of cm-0..2',
      },
    );

    // 2. the rerun adopts cm-2's, creates cm-3's; cm-4's POST is held before the operator sees it and the process killed
    const notYet = w.sandbox.hold({ method: 'POST', resource: 'subscriptions', version: V2, nth: 2, phase: 'before' });
    const second = migrate(w);
    await Promise.race([
      notYet.reached,
      second.exited.then((code) => Promise.reject(new Error(`rerun exited ${String(code)} before the hold`))),
    ]);
    expect(await progress(w)).toEqual(['cm-0:done', 'cm-1:done', 'cm-2:done', 'cm-3:done', 'cm-4:creating']);
    second.child.kill('SIGKILL');
    expect(await second.exited).toBe('SIGKILL');
    // the operator never sees it: released, it could still be applied after the check below
    notYet.drop();
    expect(operatorSubscriptions(w)['cm-4']).toEqual([`${V1}:active`]);

    // 3. the last rerun: cm-4's outcome is unknown and no event shows a subscription: sent again, marked duplicate_possible
    const last = await finished(migrate(w, ['--json']));
    expect(last.code).toBe(0);
    expect(JSON.parse(last.stdout)).toMatchObject({
      prescriptions: 5,
      already_done: 4,
      created: 1,
      adopted: 0,
      duplicate_possible: 1,
      complete: true,
    });
    expect(last.stderr).toContain('subscriptions migrate: 5/5 cm-4');

    // every prescription: exactly one subscription at V2 (none created twice at the operator), active; the V1 one cancelled
    const operator = operatorSubscriptions(w);
    for (let i = 0; i < 5; i++) expect(operator[`cm-${i}`]).toEqual([`${V1}:cancelled`, `${V2}:active`]);
    const flags = await rows<{ external_id: string; duplicate_possible: boolean; new_subscription_id: string }>(
      w,
      sql`select external_id, duplicate_possible, new_subscription_id from intake_sync.subscription_migrations order by external_id`,
    );
    expect(flags.filter((f) => f.duplicate_possible).map((f) => f.external_id)).toEqual(['cm-4']);
    // the recorded subscription is the operator's active one, for each
    const tenant = tenantOf(w);
    const recorded = await rows<{ external_id: string; subscription_id: string; identity_key: string }>(
      w,
      sql`select external_id, subscription_id, identity_key from intake_sync.prescriptions order by external_id`,
    );
    for (const r of recorded) {
      const record = [...tenant.prescriptions.values()].find((p) => p.externalId === r.external_id)!;
      const active = tenant.subscriptionsWithKey(record.identityKey).filter((s) => s.cancelledAt === null);
      expect(active.map((s) => s.id)).toEqual([r.subscription_id]);
    }
    await waitFor(async () => (await sourceStates(w)).includes(`${V1}:retired`), { timeoutMs: 10_000, what: 'V1 retired' });
  }, 60_000);

  it('a prescription whose old subscription is unknown awaits it; the old source is read until a rerun cancels it', async () => {
    const w = await start('vm_process_awaiting');
    await send(w, samplePrescription(0, { prefix: 'ak' }), true);
    w.clock.advance(5 * MINUTE);
    // sent now, its automatic subscription unknown locally (no event yet)
    await send(w, samplePrescription(1, { prefix: 'ak' }), false);
    runWorker(w);
    await waitFor(async () => (await rows(w, sql`select 1 from intake_sync.events where name = 'accepted'`)).length === 1, {
      timeoutMs: 10_000,
      what: 'ak-0 accepted',
    });

    const dry = await finished(migrate(w, ['--dry-run']));
    expect(dry.stdout).toContain(
      '2 prescription(s) in the migration, 0 already moved, 2 to move (1 whose old subscription is not known yet)',
    );

    const run = await finished(migrate(w));
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('migration not complete: 1 prescription(s) await their old subscription');
    expect(run.stdout).toContain('rerun the same command to cancel them and complete');
    expect(run.stderr).toContain('subscriptions migrate: 2/2 ak-1 (moved; its old subscription is not known yet)');
    expect(await progress(w)).toEqual(['ak-0:done', 'ak-1:awaiting_old_subscription']);
    expect(operatorSubscriptions(w)['ak-1']).toEqual([`${V1}:active`, `${V2}:active`]);
    const status = await finished(cliProcess(w, ['status', '--json']));
    expect(JSON.parse(status.stdout).migration).toEqual({
      target_version: V2,
      by_state: { done: 1, awaiting_old_subscription: 1 },
      awaiting_old_subscription: 1,
    });
    // resync would restart the current position and re-subscribe: refused while the old source drains
    const resync = await finished(cliProcess(w, ['resync']));
    expect(resync.code).toBe(2);
    expect(resync.stderr).toMatch(
      /resync: feed default is migrating API versions \(.*2024-12-10 still draining\); finish 'intake-sync subscriptions migrate' first/,
    );
    const statusText = await finished(cliProcess(w, ['status']));
    expect(statusText.stdout).toMatch(/^migration {7}to 2025-06-01: .*1 await their old subscription: rerun 'subscriptions migrate'/m);

    // its accepted event comes under V1 (the automatic subscription) and V2; the worker stores the V1 one
    w.clock.advance(5 * MINUTE);
    const oldEvent = async () =>
      rows<{ subscription_id: string }>(
        w,
        sql`select e.subscription_id from intake_sync.events e join intake_sync.prescriptions p on p.id = e.prescription_id
            where p.external_id = 'ak-1' and e.api_version = ${V1}`,
      );
    await waitFor(async () => (await oldEvent()).length === 1, { timeoutMs: 10_000, what: "ak-1's V1 event" });
    // V1 is still read and not retired: the migration is not complete (many polls of it, observed, not slept)
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
      created: 0,
      cancelled: 1,
      awaiting_old_subscription: 0,
      complete: true,
    });
    expect(operatorSubscriptions(w)).toEqual({ 'ak-0': [`${V1}:cancelled`, `${V2}:active`], 'ak-1': [`${V1}:cancelled`, `${V2}:active`] });
    const [cancelled] = await oldEvent();
    const [row] = await rows<{ old_subscription_ids: string[] }>(
      w,
      sql`select old_subscription_ids from intake_sync.subscription_migrations where external_id = 'ak-1'`,
    );
    expect(row!.old_subscription_ids).toEqual([cancelled!.subscription_id]);
    await waitFor(async () => (await sourceStates(w)).includes(`${V1}:retired`), { timeoutMs: 10_000, what: 'V1 retired' });
  }, 60_000);

  it('--release-awaiting finishes a prescription that never had a subscription (registered from fax or eRx); the old source then retires', async () => {
    const w = await start('vm_process_release');
    await send(w, samplePrescription(0, { prefix: 'rl' }), true);
    // registered locally only: the operator never had a subscription for it, so no event will ever name one
    await registerLocalPrescriptions(w.test.database.db, [{ external_id: 'rl-fax', prescription_identity: sampleIdentity(900) }]);
    runWorker(w);

    const run = await finished(migrate(w, ['--json']));
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ prescriptions: 2, awaiting_old_subscription: 1, released: 0, complete: false });
    expect(await progress(w)).toEqual(['rl-0:done', 'rl-fax:awaiting_old_subscription']);

    const released = await finished(migrate(w, ['--release-awaiting', '--json']));
    expect(released.code).toBe(0);
    expect(JSON.parse(released.stdout)).toMatchObject({
      already_done: 1,
      created: 0,
      cancelled: 0,
      released: 1,
      awaiting_old_subscription: 0,
      complete: true,
    });
    expect(released.stderr).toContain('rl-fax (released: no old subscription to cancel was ever seen)');
    expect(await progress(w)).toEqual(['rl-0:done', 'rl-fax:released']);
    // its new subscription publishes its events from now on
    const [fax] = await rows<{ subscription_id: string }>(
      w,
      sql`select subscription_id from intake_sync.prescriptions where external_id = 'rl-fax'`,
    );
    expect(tenantOf(w).subscriptions.get(fax!.subscription_id)).toMatchObject({ apiVersion: V2, cancelledAt: null });
    await waitFor(async () => (await sourceStates(w)).includes(`${V1}:retired`), { timeoutMs: 10_000, what: 'V1 retired' });
  }, 60_000);

  it('the set to move is fixed at the start: a prescription sent through the new version afterwards gets no second subscription', async () => {
    const w = await start('vm_process_fixed_set');
    await send(w, samplePrescription(0, { prefix: 'fx' }), true);
    await send(w, samplePrescription(1, { prefix: 'fx' }), true);
    // the first run stops at its first POST (killed while held before the operator sees it)
    const held = w.sandbox.hold({ method: 'POST', resource: 'subscriptions', version: V2, nth: 1, phase: 'before' });
    const first = migrate(w);
    await Promise.race([
      held.reached,
      first.exited.then((code) => Promise.reject(new Error(`migrate exited ${String(code)} before the hold`))),
    ]);
    first.child.kill('SIGKILL');
    await first.exited;
    held.drop();
    expect(await progress(w)).toEqual(['fx-0:creating', 'fx-1:pending']);

    // sent through the new source (as the outbox does once V2 is current), no event yet
    const late = samplePrescription(2, { prefix: 'fx' });
    await recordSentPrescription(w.test.database.db, late, await w.client(V2).createPrescription(late));

    const rerun = await finished(migrate(w, ['--json']));
    expect(rerun.code).toBe(0);
    expect(JSON.parse(rerun.stdout)).toMatchObject({ prescriptions: 2, complete: true });
    expect(await progress(w)).toEqual(['fx-0:done', 'fx-1:done']);
    expect(operatorSubscriptions(w)).toEqual({
      'fx-0': [`${V1}:cancelled`, `${V2}:active`],
      'fx-1': [`${V1}:cancelled`, `${V2}:active`],
      'fx-2': [`${V2}:active`],
    });
  }, 60_000);

  it('exit codes and output: 2 names a bad argument with nothing written or sent; a dry run prints no PHI; 1 names the external_id; 0 when done', async () => {
    const w = await start('vm_process_cli');
    const requests = [0, 1, 2].map((i) => samplePrescription(i, { prefix: 'cl' }));
    for (const request of requests) await send(w, request, true);
    // every patient field of the identities: none may appear in any output
    const phi = requests.flatMap((r) => [r.patient.first_name, r.patient.last_name, r.patient.dob]);
    const outputs: string[] = [];
    const cli = async (args: string[]) => {
      const result = await finished(cliProcess(w, args));
      outputs.push(result.stdout, result.stderr);
      return result;
    };
    const nothingWritten = async () => {
      expect(await rows(w, sql`select 1 from intake_sync.feed_sources`)).toEqual([]);
      expect(await rows(w, sql`select 1 from intake_sync.subscription_migrations`)).toEqual([]);
      expect(await rows(w, sql`select 1 from intake_sync.checkpoint_resets`)).toEqual([]);
    };
    const sent = requestCounts(w);

    const to = (url: string) => ['subscriptions', 'migrate', '--to-base-url', url];
    const origin = w.sandbox.origin;
    for (const [args, message] of [
      [to('http://op.example.com/intake_api/2025-06-01'), /--to-base-url: .*http/],
      [to(`${origin}/intake_api/latest`), /--to-base-url .*\/latest names no API version/],
      [to(`${origin}/intake_api/2026-01-01`), /API version 2026-01-01 is not one this build reads \(2024-12-10, 2025-06-01\)/],
      [to(w.sandbox.baseUrlFor(V1)), /the feed already reads API version 2024-12-10/],
      [[...to(w.sandbox.baseUrlFor(V2)), '--feed', 'nope'], /--feed.*nope/],
      [['subscriptions', 'migrate', '--dry-run'], /required option '--to-base-url <url>' not specified/],
    ] as const) {
      const result = await cli([...args]);
      expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 2, stdout: '' });
      expect(result.stderr).toMatch(message);
    }
    await nothingWritten();
    expect(requestCounts(w)).toBe(sent);

    const dry = await cli([...to(w.sandbox.baseUrlFor(V2)), '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe(
      `dry run, nothing written or sent: feed default from ${w.sandbox.baseUrlFor(V1)} to ${w.sandbox.baseUrlFor(V2)} (${V2})\n` +
        '3 prescription(s) in the migration, 0 already moved, 3 to move:\n  cl-0\n  cl-1\n  cl-2\n',
    );
    const dryJson = await cli([...to(w.sandbox.baseUrlFor(V2)), '--dry-run', '--json']);
    expect(dryJson.code).toBe(0);
    expect(JSON.parse(dryJson.stdout)).toMatchObject({
      dry_run: true,
      prescriptions: 3,
      external_ids: ['cl-0', 'cl-1', 'cl-2'],
      complete: false,
    });
    await nothingWritten();
    expect(requestCounts(w)).toBe(sent);

    // the operator fails the first POST (a 500: it may have been applied): exit 1 naming the external_id
    w.sandbox.setFaults({ errorRate: 1 });
    const failed = await cli(to(w.sandbox.baseUrlFor(V2)));
    w.sandbox.setFaults({ errorRate: 0 });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toMatch(
      /intake-sync: subscriptions migrate of feed default: creating the 2025-06-01 subscription of external_id cl-0 failed \(it may have been created/,
    );
    expect(failed.stderr).toContain('rerun the same command to continue');

    const done = await cli(to(w.sandbox.baseUrlFor(V2)));
    expect(done.code).toBe(0);
    expect(done.stdout).toBe(
      `feed default: 3 prescription(s) at ${V2} (0 already before this run); 3 subscription(s) created, 0 adopted, 1 possibly duplicated, 3 old cancelled, 0 already gone\n` +
        `migration complete: the worker retires ${w.sandbox.baseUrlFor(V1)} once it has read it to its end\n`,
    );
    expect(done.stderr.split('\n').filter((l) => l.startsWith('subscriptions migrate: '))).toEqual([
      'subscriptions migrate: 1/3 cl-0',
      'subscriptions migrate: 2/3 cl-1',
      'subscriptions migrate: 3/3 cl-2',
    ]);
    // another migration while this one drains: refused, nothing changed
    const before = await progress(w);
    const counts = requestCounts(w);
    const other = await cli(to('https://other.example/intake_api/2024-12-10'));
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/a migration from .*2024-12-10 to .*2025-06-01 is still under way/);
    expect(await progress(w)).toEqual(before);
    expect(requestCounts(w)).toBe(counts);

    const everything = outputs.join('\n');
    for (const value of phi) expect(everything).not.toContain(value);
  }, 90_000);

  it('sources in /metrics and status (text, --json, --all-feeds) before, during and after; run refuses a base URL none of them', async () => {
    const w = await start('vm_process_sources');
    await send(w, samplePrescription(0, { prefix: 'so' }), true);
    // its old subscription unknown: keeps the migration open (draining) until the rerun
    await send(w, samplePrescription(1, { prefix: 'so' }), false);
    const daemonEnv = {
      ...w.env,
      PAGE_LIMIT: '5',
      POLL_INTERVAL_MS: '50',
      LEASE_RETRY_MS: '200',
      HEALTH_HOST: '127.0.0.1',
      HEALTH_PORT: '0',
    };
    const daemon = cliProcess(w, ['run'], daemonEnv);
    let port = 0;
    await waitFor(
      () => {
        port = Number(daemon.logs().find((l) => l.component === 'health' && typeof l.port === 'number')?.port ?? 0);
        return port > 0;
      },
      { timeoutMs: 20_000, what: 'the health server port' },
    );
    const sourceInfo = async () =>
      (await (await fetch(`http://127.0.0.1:${port}/metrics`)).text())
        .split('\n')
        .filter((l) => l.startsWith('intake_sync_feed_source_info{'))
        .sort();
    const gauge = (version: string, state: string) =>
      `intake_sync_feed_source_info{feed="default",api_version="${version}",state="${state}"} 1`;
    const status = async (args: string[] = []) => {
      const result = await finished(cliProcess(w, ['status', ...args]));
      expect(result.code).toBe(0);
      return result.stdout;
    };
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200, { timeoutMs: 10_000, what: '/readyz 200' });

    // before: no sources anywhere
    expect(await sourceInfo()).toEqual([]);
    expect(JSON.parse(await status(['--json']))).not.toHaveProperty('sources');
    expect(await status()).not.toMatch(/^source /m);

    // during: V1 draining (the migration is open: so-1 awaits), V2 current
    expect((await finished(migrate(w))).code).toBe(0);
    const v1 = w.sandbox.baseUrlFor(V1);
    const v2 = w.sandbox.baseUrlFor(V2);
    await waitFor(async () => (await sourceInfo()).length === 2, { timeoutMs: 10_000, what: 'the source gauges' });
    expect(await sourceInfo()).toEqual([gauge(V1, 'draining'), gauge(V2, 'current')].sort());
    const during = [
      { base_url: v1, api_version: V1, state: 'draining', migration_completed_at: null, retired_at: null },
      { base_url: v2, api_version: V2, state: 'current', migration_completed_at: null, retired_at: null },
    ];
    expect(JSON.parse(await status(['--json'])).sources).toEqual(during);
    expect(JSON.parse(await status(['--all-feeds', '--json'])).feeds[0].sources).toEqual(during);
    const text = await status();
    expect(text.split('\n').filter((l) => l.startsWith('source '))).toEqual([
      `source          ${V1} draining ${v1}`,
      `source          ${V2} current ${v2}`,
    ]);
    expect((await status(['--all-feeds'])).split('\n').filter((l) => l.startsWith('source '))).toHaveLength(2);

    // after: so-1's accepted event names its old subscription, the rerun completes, the daemon retires V1
    w.clock.advance(5 * MINUTE);
    // (so-0's V1 subscription is cancelled already: only so-1's accepted comes under V1)
    await waitFor(async () => (await rows(w, sql`select 1 from intake_sync.events where api_version = ${V1}`)).length === 1, {
      timeoutMs: 10_000,
      what: "so-1's V1 accepted event",
    });
    expect((await finished(migrate(w))).code).toBe(0);
    await waitFor(async () => (await sourceInfo()).includes(gauge(V1, 'retired')), { timeoutMs: 10_000, what: 'the retired gauge' });
    expect(await sourceInfo()).toEqual([gauge(V1, 'retired'), gauge(V2, 'current')].sort());
    const after = JSON.parse(await status(['--json'])).sources as Array<Record<string, unknown>>;
    expect(after.map((s) => [s.api_version, s.state])).toEqual([
      [V1, 'retired'],
      [V2, 'current'],
    ]);
    expect(after[0]!.migration_completed_at).toEqual(expect.any(String));
    expect(after[0]!.retired_at).toEqual(expect.any(String));
    expect((await status()).split('\n').filter((l) => l.startsWith('source '))).toEqual([
      `source          ${V1} retired ${v1}`,
      `source          ${V2} current ${v2}`,
    ]);

    // run refuses a configured base URL that is none of the recorded sources (the daemon stopped first: one leader)
    daemon.child.kill('SIGTERM');
    await daemon.exited;
    // a base URL the config parse accepts (it ends in /intake_api/<version>) but no recorded source
    const elsewhere = `${w.sandbox.origin}/mirror/intake_api/2025-06-01`;
    const refused = await finished(cliProcess(w, ['run'], { ...daemonEnv, INTAKE_API_BASE_URL: elsewhere }));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `feed default: the configured base URL ${elsewhere} is none of the feed's recorded sources (${v1} (retired), ${v2} (current))`,
    );
  }, 90_000);
});
