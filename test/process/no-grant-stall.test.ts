import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/connection.js';
import { ManualClock } from '../../src/sandbox/clock.js';
import { sampleIdentity } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { registerLocalPrescriptions } from '../../src/sync/matching/local-prescriptions.js';
import { ADMIN_URL, createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import { spawnCli, stopProcesses, type WorkerProcess } from '../support/process/worker-process.js';
import { roleTagStatement } from '../support/test-run.js';

const hasPostgres = await postgresReachable();
const COUNT = 30;
const FEEDS = ['west', 'east'] as const;

/**
 * Issue 25 item 2: a login with no grant at all holds every advisory lock it can (the keys the
 * advisory scheme used, and every key it sees held in pg_locks while the daemon runs) and tries row
 * and table locks on the store's tables, while `run --once` drains two feeds: the drain ends exact.
 * The leases, the membership and the match, source and feed-claim locks are rows of tables the
 * login may not touch (drizzle/0017_lock_tables.sql), so there is nothing of ours for it to hold.
 */
describe.skipIf(!hasPostgres)(`a login with no grant cannot stall a feed (${NEEDS_POSTGRES})`, () => {
  let test: TestDatabase;
  const sandboxes = new Map<string, Sandbox>();
  let dir: string;
  let admin: postgres.Sql;
  let intruder: postgres.Sql;
  const role = `intake_nogrant_${randomBytes(4).toString('hex')}`;
  const children: WorkerProcess[] = [];

  beforeAll(async () => {
    test = await createTestDatabase('no_grant_stall');
    dir = mkdtempSync(join(tmpdir(), 'no-grant-stall-'));
    for (const [i, feed] of FEEDS.entries()) {
      // event ids are unique per deployment: each simulator's account is a different tenant
      const credentials = Array.from({ length: i + 1 }, (_, k) => ({ key: `${feed}-key-${k}`, secret: `${feed}-secret-0123456789-${k}` }));
      const sandbox = await startSandbox({ clock: new ManualClock(), credentials });
      sandbox.store.seedBulk({ count: COUNT, rejectEvery: 1_000, prefix: feed, key: sandbox.credentials.at(-1)?.key });
      await registerLocalPrescriptions(
        test.database.db,
        Array.from({ length: COUNT }, (_, k) => ({ external_id: `${feed}-${k}`, prescription_identity: sampleIdentity(k) })),
        { feed },
      );
      sandboxes.set(feed, sandbox);
    }
    admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create role "${role}" login`);
    await admin.unsafe(roleTagStatement(role));
    const url = new URL(test.url ?? '');
    url.username = role;
    intruder = postgres(url.toString(), { max: 1, onnotice: () => {} });
  });
  afterEach(() => stopProcesses(children));
  afterAll(async () => {
    await intruder?.end({ timeout: 5 });
    for (const sandbox of sandboxes.values()) await sandbox.close();
    await test?.drop();
    await admin?.unsafe(`drop role if exists "${role}"`);
    await admin?.end({ timeout: 5 });
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Takes an advisory lock of either form, exclusively (or shared when exclusive is refused); true when held. */
  async function hold(classid: number, objid: number, objsubid: number): Promise<boolean> {
    // pg_locks prints the two halves as oids (unsigned); the functions take signed integers
    const signed = (n: number) => (n > 0x7fffffff ? n - 0x100000000 : n);
    const [row] =
      objsubid === 2
        ? await intruder.unsafe<{ held: boolean }[]>(
            `select pg_try_advisory_lock(${signed(classid)}, ${signed(objid)}) or pg_try_advisory_lock_shared(${signed(classid)}, ${signed(objid)}) as held`,
          )
        : await intruder.unsafe<{ held: boolean }[]>(
            `select pg_try_advisory_lock(${(BigInt(classid) << 32n) | BigInt(objid)}) or pg_try_advisory_lock_shared(${(BigInt(classid) << 32n) | BigInt(objid)}) as held`,
          );
    return row?.held === true;
  }

  /** Every row and table lock the login may try on the store's tables: each must be refused (42501). */
  async function tryTableLocks(): Promise<string[]> {
    const refused: string[] = [];
    const tables = ['feed_locks', 'feed_leases', 'lease_members', 'feed_checkpoints', 'prescriptions', 'events', 'outbox'];
    for (const table of tables) {
      for (const statement of [
        `select 1 from intake_sync.${table} for update`,
        `select 1 from intake_sync.${table} for key share`,
        `lock table intake_sync.${table} in access exclusive mode`,
        `lock table intake_sync.${table} in access share mode`,
      ]) {
        const code = await intruder
          .begin((tx) => tx.unsafe(statement))
          .then(
            () => 'granted',
            (error: { code?: string }) => error.code ?? 'no code',
          );
        refused.push(`${code} ${statement}`);
      }
    }
    return refused;
  }

  it('holds every advisory lock it can and is refused every row and table lock, while run --once drains two feeds exact', async () => {
    // the keys the advisory scheme used: each feed's lease, the membership, the match lock, the source
    // locks, the feed claim and the migrations
    const oldKeys = await intruder.unsafe<{ a: number; b: number }[]>(
      `select 1769893473 as a, hashtext('intake-sync:intake_sync:' || f) as b from unnest(array['west', 'east', 'default']) as f
       union all select 1769893485, hashtext('intake-sync:intake_sync:members')
       union all select 7306, hashtext('intake_sync')
       union all select 7307, hashtext('intake_sync')
       union all select 7307, hashtext('intake_sync/' || f) from unnest(array['west', 'east', 'default']) as f
       union all select 7305, hashtext('intake_sync')`,
    );
    for (const key of oldKeys) {
      const [row] = await intruder.unsafe<{ held: boolean }[]>(`select pg_try_advisory_lock(${key.a}, ${key.b}) as held`);
      expect(row?.held).toBe(true);
    }
    const refusedBefore = await tryTableLocks();
    expect(refusedBefore.filter((line) => !line.startsWith('42501 '))).toEqual([]);

    const feedsFile = join(dir, 'feeds.json');
    writeFileSync(
      feedsFile,
      JSON.stringify(
        FEEDS.map((feed) => {
          const sandbox = sandboxes.get(feed);
          const credential = sandbox?.credentials.at(-1);
          return { name: feed, base_url: sandbox?.baseUrl, api_key: credential?.key, api_secret: credential?.secret };
        }),
      ),
    );
    const once = spawnCli(['run', '--once', '--json', '--wait-for-lease', '30'], {
      DATABASE_URL: test.url ?? '',
      FEEDS_FILE: feedsFile,
      PAGE_LIMIT: '5',
      POLL_INTERVAL_MS: '50',
      LEASE_RETRY_MS: '200',
      DB_LOCK_TIMEOUT_MS: '5000',
      HEALTH_HOST: '127.0.0.1',
      HEALTH_PORT: '0',
    });
    children.push(once);

    // while it runs: every advisory key held by anyone in this database is taken too, and every
    // relation anyone locks is tried
    let exited = false;
    void once.exited.then(() => (exited = true));
    const taken = new Set<string>();
    const relationsTried = new Set<string>();
    while (!exited) {
      const seen = await intruder.unsafe<{ locktype: string; classid: number; objid: number; objsubid: number; relation: string | null }[]>(
        `select locktype, classid::bigint as classid, objid::bigint as objid, objsubid, relation::regclass::text as relation
           from pg_locks where pid <> pg_backend_pid() and database = (select oid from pg_database where datname = current_database())`,
      );
      for (const lock of seen) {
        if (lock.locktype === 'advisory') {
          const key = `${lock.classid}/${lock.objid}/${lock.objsubid}`;
          if (!taken.has(key) && (await hold(Number(lock.classid), Number(lock.objid), Number(lock.objsubid)))) taken.add(key);
        } else if (lock.locktype === 'relation' && lock.relation && !relationsTried.has(lock.relation)) {
          relationsTried.add(lock.relation);
          const code = await intruder
            .begin((tx) => tx.unsafe(`lock table ${lock.relation} in access exclusive mode nowait`))
            .then(
              () => 'granted',
              (error: { code?: string }) => error.code ?? 'no code',
            );
          // refused for want of a privilege, never granted (55P03 would mean it only lost a race)
          expect(code, `lock table ${lock.relation}`).not.toBe('granted');
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }

    expect(await once.exited).toBe(0);
    const lines = once
      .stdout()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { feed: string; drained: boolean });
    expect(lines.map((l) => [l.feed, l.drained]).sort()).toEqual([
      ['east', true],
      ['west', true],
    ]);
    for (const feed of FEEDS) {
      const statuses = await queryRows<{ status: string; n: number }>(
        test.database.db,
        sql`select status, count(*)::int as n from intake_sync.prescriptions where feed = ${feed} group by status order by status`,
      );
      expect(statuses, feed).toEqual([{ status: 'delivered', n: COUNT }]);
      const [open] = await queryRows<{ n: number }>(
        test.database.db,
        sql`select count(*)::int as n from intake_sync.quarantine where feed = ${feed} and resolved_at is null`,
      );
      expect(open?.n, feed).toBe(0);
    }
    // it really held them: the old scheme's keys all along, in this database
    const [held] = await intruder.unsafe<{ n: number }[]>(
      `select count(*)::int as n from pg_locks where pid = pg_backend_pid() and locktype = 'advisory' and granted`,
    );
    expect(held?.n).toBeGreaterThanOrEqual(oldKeys.length);
    expect((await tryTableLocks()).filter((line) => !line.startsWith('42501 '))).toEqual([]);
    process.stdout.write(
      `[no-grant-stall] held ${held?.n} advisory locks (${oldKeys.length} old keys, ${taken.size} seen held during the run), tried ${relationsTried.size} relations\n`,
    );
  }, 180_000);
});
