import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/connection.js';
import { ManualClock } from '../../src/sandbox/clock.js';
import { sampleIdentity, seedRejects } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { leaseHolder } from '../../src/sync/leadership/lease.js';
import { registerLocalPrescriptions } from '../../src/sync/matching/local-prescriptions.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import { NEEDS_PGBOUNCER, PGBOUNCER, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { waitFor } from '../support/wait-for.js';
import { spawnCli, stopProcesses, type WorkerProcess } from '../support/process/worker-process.js';

const ready = (await postgresReachable()) && PGBOUNCER !== undefined;
if (!ready) console.warn(`SKIPPED test/deploy/pgbouncer-workers.test.ts: ${PGBOUNCER ? NEEDS_POSTGRES : NEEDS_PGBOUNCER}`);
const COUNT = 400;
const REJECT_EVERY = 7;
const PREFIX = 'pgb';
const KILLS = 3;

/**
 * Issue 10 §7, with real processes: DATABASE_URL through a real PgBouncer in transaction mode.
 * With LEASE_DATABASE_URL straight to Postgres, workers killed with SIGKILL one after the other
 * hand the feed over and the store ends exactly as the feed dictates; a trigger records, for
 * every committed page, which process committed it and which process held the feed lease at
 * that instant: always the same one. Without LEASE_DATABASE_URL, `run` refuses to start.
 */
describe.skipIf(!ready)(`workers behind PgBouncer in transaction mode (${NEEDS_PGBOUNCER})`, () => {
  let test: TestDatabase;
  let pooler: PgBouncer;
  let sandbox: Sandbox;
  let env: Record<string, string>;
  let expectedEvents = 0;
  const children: WorkerProcess[] = [];

  function start(args: string[], extra: Record<string, string> = {}): WorkerProcess {
    const worker = spawnCli(args, { ...env, ...extra });
    children.push(worker);
    return worker;
  }

  // the store's tables, in its schema
  const names = () => test.database.names;
  const checkpointVersion = async () =>
    Number(
      (
        await queryRows<{ version: number }>(
          test.database.db,
          sql`select coalesce(max(version), 0)::int as version from ${names().feedCheckpoints}`,
        )
      )[0]?.version ?? 0,
    );
  const eventCount = async () =>
    Number((await queryRows<{ n: number }>(test.database.db, sql`select count(*)::int as n from ${names().events}`))[0]?.n ?? 0);

  beforeAll(async () => {
    test = await createTestDatabase('pgbouncer_workers');
    pooler = await startPgBouncer('transaction', 6);
    sandbox = await startSandbox({ clock: new ManualClock() });
    const [credential] = sandbox.credentials;
    expectedEvents = sandbox.store.seedBulk({ count: COUNT, rejectEvery: REJECT_EVERY, prefix: PREFIX }).events;
    await registerLocalPrescriptions(
      test.database.db,
      Array.from({ length: COUNT }, (_, i) => ({ external_id: `${PREFIX}-${i}`, prescription_identity: sampleIdentity(i) })),
    );
    // test-only audit: who committed each page, and who held the feed lease at that moment
    const schema = test.database.names.schema;
    await test.database.db.execute(
      sql.raw(`
        create table page_audit (version bigint primary key, committer text not null, lease_holder text);
        create function audit_page() returns trigger language plpgsql as $$
        begin
          insert into page_audit (version, committer, lease_holder)
          select new.version, current_setting('application_name'),
                 (select string_agg(a.application_name, ',') from "${schema}".feed_leases l join pg_stat_activity a on a.pid = l.holder_pid
                   where l.feed = 'default' and l.expires_at > now());
          return new;
        end $$;
        -- a page moves the version; registering the feed at start (origin, 0011) writes the row without moving it
        create trigger audit_page after update on "${schema}".feed_checkpoints for each row
          when (new.version is distinct from old.version) execute function audit_page();
      `),
    );
    env = {
      DATABASE_URL: pooler.through(test.url as string),
      INTAKE_API_BASE_URL: sandbox.baseUrl,
      INTAKE_API_KEY: credential?.key ?? '',
      INTAKE_API_SECRET: credential?.secret ?? '',
      PAGE_LIMIT: '5',
      POLL_INTERVAL_MS: '50',
      LEASE_RETRY_MS: '200',
      HEALTH_HOST: '127.0.0.1',
      HEALTH_PORT: '0',
    };
  });
  afterEach(() => stopProcesses(children));
  afterAll(async () => {
    await sandbox?.close();
    await pooler?.stop();
    await test?.drop();
  });

  it('without LEASE_DATABASE_URL, run refuses at start and says what to configure; nothing is taken or written', async () => {
    const refused = start(['run']);
    expect(await refused.exited).toBe(2);
    const text = refused
      .logs()
      .map((l) => String(l.raw ?? l.msg ?? ''))
      .join('\n');
    expect(text).toMatch(/LEASE_DATABASE_URL: is required: DATABASE_URL goes through a transaction-mode connection pooler/);
    expect(text).toMatch(/direct postgres:\/\/ URL of the same database/);
    // the URL may hold a password: not echoed
    expect(text).not.toContain(String(pooler.port));
    expect(await checkpointVersion()).toBe(0);
    expect(await leaseHolder(test.database, 'default')).toBeNull();
  });

  it('commands that take no lease work through the pooler without LEASE_DATABASE_URL (status)', async () => {
    const status = start(['status', '--json']);
    expect(await status.exited).toBe(0);
    expect(JSON.parse(status.stdout())).toMatchObject({ feed: 'default', leader: { held: false } });
  });

  it('with LEASE_DATABASE_URL also through the pooler, run refuses', async () => {
    const refused = start(['run'], { LEASE_DATABASE_URL: pooler.through(test.url as string) });
    expect(await refused.exited).toBe(2);
    const text = refused
      .logs()
      .map((l) => String(l.raw ?? l.msg ?? ''))
      .join('\n');
    expect(text).toMatch(/LEASE_DATABASE_URL: must be a direct connection to Postgres, not through a pooler/);
    expect(await checkpointVersion()).toBe(0);
  });

  it(`with LEASE_DATABASE_URL direct: ${KILLS} leaders killed with SIGKILL mid-drain, exact store, every page committed by the lease holder`, async () => {
    const workerEnv = { LEASE_DATABASE_URL: test.url as string };
    for (let i = 0; i < 3; i += 1) start(['run'], workerEnv);
    let killed = 0;
    let lastVersion = 0;
    while (killed < KILLS) {
      await waitFor(async () => (await checkpointVersion()) >= lastVersion + 12, {
        timeoutMs: 60_000,
        what: `12 more pages after kill ${killed}`,
      });
      const holder = await leaseHolder(test.database, 'default');
      const [row] = holder
        ? await queryRows<{ name: string }>(
            test.database.db,
            sql`select application_name as name from pg_stat_activity where pid = ${holder.pid}`,
          )
        : [];
      const pid = Number(/intake-sync\[(\d+)\]/.exec(row?.name ?? '')?.[1] ?? 0);
      const leader = children.find((c) => c.child.pid === pid && c.child.exitCode === null);
      if (!leader) {
        // between leaders: look again shortly
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      lastVersion = await checkpointVersion();
      if ((await eventCount()) >= expectedEvents) break; // drained before all kills landed: the test below says so
      leader.child.kill('SIGKILL');
      expect(await leader.exited).toBe('SIGKILL');
      killed += 1;
      start(['run'], workerEnv);
    }
    expect(killed, 'the drain ended before every kill landed: seed a longer feed').toBe(KILLS);
    await waitFor(async () => (await eventCount()) === expectedEvents, { timeoutMs: 120_000, what: 'the whole feed to be applied' });
    // the survivors keep polling (caught up) through the pooler: an empty poll writes nothing, so the
    // leader's last successful poll, on its /metrics, is what must keep moving
    const leaderMetrics = async (): Promise<{ leader: boolean; lastSuccess: number }[]> =>
      Promise.all(
        children
          .filter((c) => c.child.exitCode === null && c.child.signalCode === null)
          .map(async (c) => {
            const port = c
              .logs()
              .find((l) => typeof l.port === 'number' && String(l.msg ?? '').startsWith('health endpoint listening'))?.port;
            if (port === undefined) return { leader: false, lastSuccess: 0 };
            const body = await (await fetch(`http://127.0.0.1:${String(port)}/metrics`)).text();
            const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(body)?.[1] ?? 0);
            return { leader: value('intake_sync_leader') === 1, lastSuccess: value('intake_sync_last_success_timestamp_seconds') };
          }),
      );
    const polledAt = async () => Math.max(0, ...(await leaderMetrics()).filter((m) => m.leader).map((m) => m.lastSuccess));
    const drainedAt = await polledAt();
    const versionAtDrain = await checkpointVersion();
    expect(drainedAt, 'the leader reports its last successful poll').toBeGreaterThan(0);
    await waitFor(async () => (await polledAt()) >= drainedAt + 0.5, { timeoutMs: 30_000, what: 'caught-up polls after the drain' });
    expect(await checkpointVersion(), 'caught-up polls commit nothing').toBe(versionAtDrain);
    for (const child of children) if (child.child.exitCode === null) child.child.kill('SIGTERM');
    for (const child of children) {
      const exit = await child.exited;
      const tail = child
        .logs()
        .slice(-8)
        .map((l) => JSON.stringify(l))
        .join('\n');
      expect([0, 'SIGKILL'], `a worker ended with ${exit}:\n${tail}`).toContain(exit);
    }

    const rows = await queryRows<{ external_id: string; status: string; events: number }>(
      test.database.db,
      sql`select p.external_id, p.status, (select count(*)::int from ${names().events} e where e.prescription_id = p.id) as events
            from ${names().prescriptions} p`,
    );
    expect(rows).toHaveLength(COUNT);
    for (const row of rows) {
      const rejected = seedRejects(Number(row.external_id.slice(PREFIX.length + 1)), REJECT_EVERY);
      expect([row.external_id, row.status, row.events]).toEqual([row.external_id, rejected ? 'rejected' : 'delivered', rejected ? 1 : 4]);
    }
    const [totals] = await queryRows<{ events: number; quarantined: number }>(
      test.database.db,
      sql`select (select count(*)::int from ${names().events}) as events, (select count(*)::int from ${names().quarantine}) as quarantined`,
    );
    expect(totals).toEqual({ events: expectedEvents, quarantined: 0 });

    const audit = await queryRows<{ version: number; committer: string; lease_holder: string | null }>(
      test.database.db,
      sql.raw('select version::int as version, committer, lease_holder from page_audit order by version'),
    );
    // the lease session's application_name is `intake-sync[pid] lease @host`: the same process as the committer
    const strangers = audit.filter((a) => !(a.lease_holder ?? '').startsWith(`${a.committer} lease @`));
    expect(strangers, 'pages committed by a process that did not hold the lease at that instant').toEqual([]);
    const committers = new Set(audit.map((a) => a.committer));
    // the original leader, then one per kill at least
    expect(committers.size).toBeGreaterThanOrEqual(KILLS + 1);
    console.log(
      `pgbouncer: ${audit.length} pages committed by ${committers.size} workers through the pooler, ${KILLS} leaders killed, 0 pages by a non-holder`,
    );
  }, 300_000);
});
