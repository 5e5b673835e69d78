import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import postgres from 'postgres';
import pino from 'pino';
import { openDatabase, type Database } from '../../../src/db/connection.js';
import { grantStatements } from '../../../src/db/grants.js';
import { StatisticsKeeper, type TableAnalyzed } from '../../../src/sync/statistics/statistics-keeper.js';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../../support/db.js';
import { roleTagStatement } from '../../support/test-run.js';

// a real role without ownership: only a real server has roles
const real = await postgresReachable();
const ROLE = `t_statistics_runtime_${process.pid}`;
let tdb: TestDatabase;
let admin: postgres.Sql;
let runtime: Database;

beforeAll(async () => {
  if (!real) return;
  tdb = await createTestDatabase('statistics_keeper');
  admin = postgres(tdb.url as string, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop role if exists "${ROLE}"`);
  await admin.unsafe(`create role "${ROLE}" login`);
  await admin.unsafe(roleTagStatement(ROLE));
  await admin.unsafe(grantStatements('runtime', 'intake_sync', ROLE).join('\n'));
  const url = new URL(tdb.url as string);
  url.username = ROLE;
  runtime = await openDatabase({ url: url.toString() });
});
afterAll(async () => {
  if (!real) return;
  await runtime.close();
  await tdb.drop();
  await admin.unsafe(`drop role if exists "${ROLE}"`).catch(() => {});
  await admin.end({ timeout: 5 });
});

const keeper = (analyzed: TableAnalyzed[], now = () => 0) =>
  new StatisticsKeeper({
    db: runtime.db,
    settings: { intervalMs: 60_000, startDelayMs: 10_000 },
    clock: { now },
    sleep: async () => {},
    log: pino({ level: 'silent' }),
    onAnalyzed: (a) => analyzed.push(a),
  });

const statistics = async (table: string) =>
  Number(
    (await admin.unsafe(`select count(*)::int as n from pg_stats where schemaname = 'intake_sync' and tablename = $1`, [table]))[0]?.n,
  );

// NEEDS_POSTGRES (test/support/db.ts): skipped on embedded PGlite
describe.skipIf(!real)('the statistics task, as the runtime role', () => {
  test('analyzes the tables whose changes passed the threshold, and only those; a second pass finds nothing', {
    timeout: 60_000,
  }, async () => {
    // a drain's worth of held events, never analyzed (autovacuum off here; the pass must not rely on it)
    await admin.unsafe(`insert into intake_sync.events (id, feed, name, occurred_at, subscription_id, api_version, payload, identity_key, status_rank)
      select 'ev-' || g, 'default', 'prescription.received', now(), 'sub-' || g, '2024-12-10', '{}', 'key-' || g, 1 from generate_series(1, 2000) g`);
    await admin.unsafe(`analyze intake_sync.quarantine`);
    // the server's stats are written at transaction end; make them visible to the next read now
    await admin.unsafe('select pg_stat_force_next_flush()').catch(() => {});
    expect(await statistics('events')).toBe(0);
    let clock = 0;
    const analyzed: TableAnalyzed[] = [];
    const task = keeper(analyzed, () => (clock += 5));
    const first = await task.passOnce();
    expect(first.map((a) => a.table)).toContain('events');
    expect(first.map((a) => a.table)).not.toContain('quarantine');
    const events = first.find((a) => a.table === 'events');
    expect(events).toEqual({ table: 'events', rowsChanged: 2000, durationMs: 5 });
    expect(analyzed).toEqual(first);
    expect(await statistics('events')).toBeGreaterThan(0);
    const second = await keeper([]).passOnce();
    expect(second.map((a) => a.table)).not.toContain('events');
  });

  test('_analyze_table analyzes nothing but a table of the schema, named exactly', async () => {
    const plain = postgres(
      new URL(`postgres://${ROLE}@${new URL(tdb.url as string).host}${new URL(tdb.url as string).pathname}`).toString(),
      {
        max: 1,
        onnotice: () => {},
      },
    );
    try {
      for (const name of ['pg_class', 'prescription_status', 'events; drop table x', '../events', 'x'.repeat(100)]) {
        await expect(plain.unsafe('select intake_sync._analyze_table($1)', [name])).rejects.toMatchObject({ code: '22023' });
      }
      await expect(plain.unsafe('select intake_sync._analyze_table(null)')).rejects.toMatchObject({ code: '23502' });
      await expect(plain.unsafe('select intake_sync._analyze_table($1)', ['events'])).resolves.toBeDefined();
    } finally {
      await plain.end({ timeout: 5 });
    }
  });
});
