import pino from 'pino';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../../src/db/connection.js';
import { createFeedLease, leaseHolder } from '../../../src/sync/leadership/lease.js';
import { Poller } from '../../../src/sync/poll/poller.js';
import { sleepUnlessAborted } from '../../../src/lib/loop-sleep.js';
import { SyncWorker } from '../../../src/sync/leadership/leader-loop.js';
import { WorkerState } from '../../../src/sync/state/worker-state.js';
import { ADMIN_URL, createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { startFreezableProxy } from '../../support/process/freezable-proxy.js';
import { waitFor } from '../../support/wait-for.js';

const hasPostgres = await postgresReachable();
const silent = pino({ level: 'silent' });
const FEED = 'lease-test';

describe.skipIf(!hasPostgres)(`feed lease (${NEEDS_POSTGRES})`, () => {
  let test: TestDatabase;
  const opened: Database[] = [];
  let admin: postgres.Sql;

  /** A separate pool, as a separate process would have. */
  async function connect(): Promise<Database> {
    const database = await openDatabase({ url: test.url, max: 2 });
    opened.push(database);
    return database;
  }

  beforeAll(async () => {
    test = await createTestDatabase('lease');
    admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    for (const database of opened) await database.close().catch(() => {});
    await admin.end({ timeout: 5 });
    await test.drop();
  });

  it('only one holder at a time; the lock goes with its session and the standby then takes it', async () => {
    const a = createFeedLease(await connect(), { feed: FEED, url: test.url, idleTtlMs: 60_000 });
    const b = createFeedLease(await connect(), { feed: FEED, url: test.url, idleTtlMs: 60_000 });
    expect(await a.tryAcquire()).toBe(true);
    expect(await b.tryAcquire()).toBe(false);
    expect(await a.stillHeld()).toBe(true);
    const holder = await leaseHolder(test.database, FEED);
    expect(holder).not.toBeNull();

    // the holder's connection dies (process killed, network cut)
    await admin`select pg_terminate_backend(${holder?.pid ?? -1}::int4)`;
    expect(await a.stillHeld()).toBe(false);
    expect(await b.tryAcquire()).toBe(true);
    await a.release();
    await b.release();
    expect(await leaseHolder(test.database, FEED)).toBeNull();
  });

  it('a frozen holder (no checks within the TTL) loses its session, so a standby can take over', async () => {
    const frozen = createFeedLease(await connect(), { feed: `${FEED}-ttl`, url: test.url, idleTtlMs: 1_000 });
    const standby = createFeedLease(await connect(), { feed: `${FEED}-ttl`, url: test.url, idleTtlMs: 1_000 });
    expect(await frozen.tryAcquire()).toBe(true);
    // the server ends the idle session; waiting on the server, so poll with a deadline
    await waitFor(() => standby.tryAcquire(), { timeoutMs: 20_000, what: 'standby to take the lease' });
    expect(await frozen.stillHeld()).toBe(false);
    await frozen.release();
    await standby.release();
  });

  it('a holder frozen at any point of a lease check still loses the lock after the TTL (no query is left half-sent)', async () => {
    // a parameterised postgres.js query goes out in two writes on first use; a process frozen between
    // them leaves its backend 'active' mid-protocol, where no idle timeout applies, holding the lock forever
    const target = new URL(test.url ?? '');
    const proxy = await startFreezableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    try {
      const viaProxy = new URL(test.url ?? '');
      viaProxy.port = String(proxy.port);
      const feed = `${FEED}-frozen-check`;
      const frozen = createFeedLease(await connect(), { feed, url: viaProxy.toString(), idleTtlMs: 1_000 });
      const standby = createFeedLease(await connect(), { feed, url: test.url, idleTtlMs: 1_000 });
      expect(await frozen.tryAcquire()).toBe(true);
      expect(await standby.tryAcquire()).toBe(false);
      proxy.freezeAfterNextClientWrite();
      const check = frozen.stillHeld();
      const frozenAt = Date.now();
      await waitFor(() => standby.tryAcquire(), { timeoutMs: 20_000, what: 'the standby to take the lease of a holder frozen mid-check' });
      // a frozen holder otherwise keeps the lock for ever: a bound of several TTLs tells the two apart
      // on a loaded machine too
      expect(Date.now() - frozenAt).toBeLessThan(10_000);
      // the frozen check never got its answer: past its deadline it reports the lease lost
      expect(await check).toBe(false);
      await standby.release();
      await frozen.release();
    } finally {
      await proxy.close();
    }
  });

  it('two workers: exactly one leads; when its lock connection dies it steps down and the standby takes over within the retry interval', async () => {
    const leaseRetryMs = 100;
    const workers = await Promise.all(
      ['w1', 'w2'].map(async (name) => {
        const database = await connect();
        const state = new WorkerState({ now: () => Date.now() });
        const worker = new SyncWorker({
          lease: createFeedLease(database, { feed: `${FEED}-workers`, url: test.url, idleTtlMs: 10_000 }),
          createPoller: () =>
            new Poller({
              // caught up on an empty feed: enough to keep the leader busy polling
              fetchPage: async ({ iterator }) => ({ events: [], meta: { iterator: iterator ?? 'start', done: true } }),
              applyPage: async () => ({
                version: 1,
                received: 0,
                inserted: 0,
                duplicates: 0,
                statusChanges: 0,
                matched: 0,
                quarantined: { malformed: 0, unmatched: 0, ambiguous: 0, unsupported_version: 0 },
              }),
              loadCheckpoint: async () => ({ iterator: null, version: 0, updatedAt: 0 }),
              clock: { now: () => Date.now() },
              sleep: sleepUnlessAborted,
              nextDelay: () => 20,
              state,
              log: silent,
            }),
          state,
          sleep: sleepUnlessAborted,
          leaseRetryMs,
          log: silent,
        });
        return { name, state, worker, run: worker.run() };
      }),
    );
    try {
      const leaders = () => workers.filter((w) => w.state.snapshot().role === 'leader');
      await waitFor(async () => leaders().length === 1 && workers.every((w) => w.state.snapshot().role !== 'starting'), {
        timeoutMs: 20_000,
        what: 'one leader and one standby',
      });
      const [first] = leaders();
      const holder = await leaseHolder(test.database, `${FEED}-workers`);
      const killedAt = Date.now();
      await admin`select pg_terminate_backend(${holder?.pid ?? -1}::int4)`;
      await waitFor(async () => leaders().length === 1 && leaders()[0] !== first, { timeoutMs: 20_000, what: 'the standby to take over' });
      // the old leader notices within one check, the standby retries every interval: a few intervals
      // plus a loaded machine's scheduling (never the idle TTL of 10 s it would wait without the check)
      expect(Date.now() - killedAt).toBeLessThan(2 * leaseRetryMs + 5_000);
      expect(first?.state.snapshot().role).toBe('standby');
    } finally {
      await Promise.all(workers.map((w) => w.worker.stop()));
      await Promise.all(workers.map((w) => w.run));
    }
    expect(workers.map((w) => w.state.snapshot().role)).toEqual(['stopped', 'stopped']);
    expect(await leaseHolder(test.database, `${FEED}-workers`)).toBeNull();
  });
});
