import postgres from 'postgres';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LeaseSession } from '../../../src/sync/leadership/lease-session.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { type CountingProxy, startCountingProxy } from '../../support/db/counting-proxy.js';

const hasPostgres = await postgresReachable();
const FEEDS = Array.from({ length: 200 }, (_, i) => `many-${String(i).padStart(3, '0')}`);

// Calls issued in one tick are one lease check: gathering ends at once (no clock), so the round
// holds exactly the calls already queued.
const gather = () => Promise.resolve();

describe.skipIf(!hasPostgres)(`lease session of many feeds (${NEEDS_POSTGRES})`, () => {
  let test: TestDatabase;
  let proxy: CountingProxy;
  let admin: postgres.Sql;
  const sessions: LeaseSession[] = [];

  function session(feeds: readonly string[] = FEEDS): LeaseSession {
    const created = new LeaseSession(proxy.urlVia(test.url ?? ''), test.database.names.schema, { feeds, idleTtlMs: 60_000, gather });
    sessions.push(created);
    return created;
  }

  /** The statements one lease check of `feeds` sends. */
  async function statementsOf<T>(step: () => Promise<T>): Promise<{ value: T; statements: number }> {
    const before = proxy.counts.simpleQueries + proxy.counts.executes;
    const value = await step();
    return { value, statements: proxy.counts.simpleQueries + proxy.counts.executes - before };
  }

  const takeAll = (s: LeaseSession, feeds = FEEDS) => Promise.all(feeds.map((feed) => s.lease(feed).tryAcquire()));
  const checkAll = (s: LeaseSession, feeds = FEEDS) => Promise.all(feeds.map((feed) => s.lease(feed).stillHeld()));
  const holders = async () =>
    (
      await admin.unsafe<{ holder: string; n: number }[]>(
        `select holder, count(*)::int as n from "${test.database.names.schema}".feed_leases l
          where expires_at > now() and exists (select 1 from pg_stat_activity a where a.pid = l.holder_pid) group by holder order by n desc`,
      )
    ).map((row) => row.n);

  beforeAll(async () => {
    test = await createTestDatabase('lease_session');
    const target = new URL(test.url ?? '');
    proxy = await startCountingProxy({ host: target.hostname, port: Number(target.port || 5432) });
    admin = postgres(test.url ?? '', { max: 1, onnotice: () => {} });
  });
  // each test starts with no member and no lease
  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.close();
  });
  afterAll(async () => {
    await admin?.end({ timeout: 5 });
    await proxy?.close();
    await test.drop();
  });

  it('a lease check of 200 feeds is one statement, and taking them all at a cold start is two', async () => {
    const lone = session();
    const taken = await statementsOf(() => takeAll(lone));
    expect(taken.value.every(Boolean)).toBe(true);
    // joining the replicas (once per session) and one take of every free feed
    expect(taken.statements).toBe(2);
    const checked = await statementsOf(() => checkAll(lone));
    expect(checked.value.every(Boolean)).toBe(true);
    expect(checked.statements).toBe(1);
    // a standby's retry of the feeds it holds is their check
    const retried = await statementsOf(() => takeAll(lone));
    expect(retried.value.every(Boolean)).toBe(true);
    expect(retried.statements).toBe(1);
    const released = await statementsOf(() => Promise.all(FEEDS.map((feed) => lone.lease(feed).release())));
    expect(released.statements).toBe(1);
    expect(await holders()).toEqual([]);
  });

  it('a replica that joins gets its share within one lease check: the holder gives all of its excess up at once, the feeds it took last', async () => {
    const first = session();
    expect((await takeAll(first)).every(Boolean)).toBe(true);
    const second = session();
    // the newcomer may take at most its share (ceil(200 / 2)), and none is free yet
    expect((await takeAll(second)).some(Boolean)).toBe(false);
    const check = await statementsOf(() => checkAll(first));
    // the check, and one release of the whole excess
    expect(check.statements).toBe(2);
    expect(check.value).toEqual(FEEDS.map((_, i) => i < 100));
    const taking = await statementsOf(() => takeAll(second));
    expect(taking.value).toEqual(FEEDS.map((_, i) => i >= 100));
    expect(taking.statements).toBe(1);
    expect(await holders()).toEqual([100, 100]);
    // at its share, neither gives up or takes any more
    expect((await checkAll(first)).filter(Boolean)).toHaveLength(100);
    expect((await takeAll(second)).filter(Boolean)).toHaveLength(100);
    expect(await holders()).toEqual([100, 100]);
  });

  it('a replica at its share sends no take for the feeds it does not hold, and takes again once a member leaves', async () => {
    const first = session();
    const second = session();
    expect((await takeAll(first)).every(Boolean)).toBe(true);
    await takeAll(second);
    await checkAll(first);
    expect((await takeAll(second)).filter(Boolean)).toHaveLength(100);
    // every standby and leader of the first asks at once: its leaders' check only, no take (it holds its share)
    const atShare = await statementsOf(() => takeAll(first));
    expect(atShare.value).toEqual(FEEDS.map((_, i) => i < 100));
    expect(atShare.statements).toBe(1);
    // the second leaves: the first's next check counts one member, and its next take round takes the rest
    await sessions.splice(sessions.indexOf(second), 1)[0]?.close();
    expect((await checkAll(first)).filter(Boolean)).toHaveLength(100);
    const after = await statementsOf(() => takeAll(first));
    expect(after.value.every(Boolean)).toBe(true);
    expect(after.statements).toBe(2);
    expect(await holders()).toEqual([200]);
  });

  it('with no member count read within half a lease TTL, a replica at its share asks the database', async () => {
    let now = 0;
    const first = new LeaseSession(proxy.urlVia(test.url ?? ''), test.database.names.schema, {
      feeds: FEEDS,
      idleTtlMs: 60_000,
      gather,
      now: () => now,
    });
    sessions.push(first);
    const second = session();
    await takeAll(first);
    await takeAll(second);
    await checkAll(first);
    await takeAll(second);
    const fresh = await statementsOf(() => takeAll(first, FEEDS.slice(100)));
    expect(fresh.statements).toBe(0);
    now += 30_001;
    const stale = await statementsOf(() => takeAll(first, FEEDS.slice(100)));
    expect(stale.value.some(Boolean)).toBe(false);
    expect(stale.statements).toBe(1);
  });

  it('replicas taking overlapping feeds in opposite orders at once never deadlock, and each feed has one holder', async () => {
    const replicas = [session(), session(), session()];
    const reversed = [...FEEDS].reverse();
    for (let round = 0; round < 5; round++) {
      const results = await Promise.all(replicas.map((s, i) => takeAll(s, i % 2 === 0 ? FEEDS : reversed)));
      // a take that failed (a deadlock among them) would reject the whole round above
      expect(results.length).toBe(3);
      await Promise.all(replicas.map((s) => checkAll(s)));
    }
    const counts = await holders();
    expect(counts.reduce((a, b) => a + b, 0)).toBe(FEEDS.length);
    // fair share: each within one feed of ceil(200 / 3)
    for (const n of counts) expect(n).toBeLessThanOrEqual(Math.ceil(FEEDS.length / 3));
    expect(counts).toHaveLength(3);
  });

  it('a session whose backend was terminated reports every lease lost, and its next take opens a new session', async () => {
    const feeds = FEEDS.slice(0, 10);
    const s = session(feeds);
    expect((await takeAll(s, feeds)).every(Boolean)).toBe(true);
    await admin.unsafe(
      `select pg_terminate_backend(holder_pid) from "${test.database.names.schema}".feed_leases where feed = '${feeds[0]}'`,
    );
    expect((await checkAll(s, feeds)).some(Boolean)).toBe(false);
    expect((await takeAll(s, feeds)).every(Boolean)).toBe(true);
    await s.close();
    expect(await holders()).toEqual([]);
  });
});
