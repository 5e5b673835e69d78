// `npm run bench:overdue` (issue 28 §3): the scrape-time read of intake_sync_prescriptions_overdue at
// 1M prescriptions, on a fresh database of the real server with NO planner statistics (autovacuum is off
// here, and the minute after a burst looks the same on any server): its p50/p95 over repeated scrapes,
// then again after ANALYZE. Target: <= 20 ms. Options:
//   --prescriptions N   prescriptions across two feeds (default 1000000)
//   --scrapes N         scrapes measured (default 50)
//   --keep              keep the database
//
// The population is a vendor's history: most prescriptions ended long ago (delivered, rejected), each
// with its delivered send; a few percent are in flight at every stage, some past their deadline; a
// few thousand sends await their first event; cancellations, most answered.
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { registerFeeds } from '../src/db/feed-registry.js';
import { overdueSource } from '../src/ops/metrics-overdue.js';
import { writeFeedDeadlines } from '../src/store-api/overdue/feed-deadlines.js';
import { DEFAULT_STAGE_DEADLINES } from '../src/config/overdue-deadlines.js';
import { createBenchDatabase, DEFAULT_SERVER_URL, dropUndroppedDatabases } from './database.js';

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  if (index < 0) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value < 1 || value > 10_000_000) throw new Error(`${name}: must be a whole number from 1 to 10000000`);
  return value;
}

const total = option('--prescriptions', 1_000_000);
const scrapes = option('--scrapes', 50);
const keep = process.argv.includes('--keep');
const FEEDS = ['clinic-a', 'clinic-b'];

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function main(): Promise<void> {
  const serverUrl = process.env.DATABASE_URL ?? DEFAULT_SERVER_URL;
  const db = await createBenchDatabase(serverUrl, `bench_overdue_${randomBytes(4).toString('hex')}`);
  try {
    await registerFeeds(db.database.db, FEEDS, null);
    await writeFeedDeadlines(
      db.database.db,
      FEEDS.map((feed) => ({ feed, deadlines: DEFAULT_STAGE_DEADLINES })),
    );
    const seeded = performance.now();
    // i % 100: 0-84 delivered, 85-89 rejected, 90-91 accepted, 92-93 ordered, 94-95 dispensed,
    // 96-97 sent with no event yet, 98 cancelled (answered: rejected), 99 cancel requested, unanswered.
    // Of the ones in flight, one in twenty is stalled (200 h at its stage: past every deadline); the
    // rest moved within the last hour. A healthy vendor's history with 0.3% of it overdue.
    const age = `case when (i / 100) % 20 = 0 then make_interval(hours => 200) else make_interval(mins => i % 60) end`;
    await db.sql.unsafe(`
      insert into intake_sync.prescriptions (feed, external_id, status, status_rank, status_occurred_at, cancellation_requested_at, created_at)
      select case when i % 2 = 0 then 'clinic-a' else 'clinic-b' end, 'rx-' || i,
        case when i % 100 < 85 then 'delivered' when i % 100 < 90 then 'rejected' when i % 100 < 92 then 'accepted'
             when i % 100 < 94 then 'ordered' when i % 100 < 96 then 'dispensed' when i % 100 < 98 then null
             when i % 100 = 98 then 'rejected' else 'ordered' end,
        case when i % 100 < 85 then 4 when i % 100 < 90 then 5 when i % 100 < 92 then 1 when i % 100 < 94 then 2
             when i % 100 < 96 then 3 when i % 100 < 98 then 0 when i % 100 = 98 then 5 else 2 end,
        case when i % 100 between 96 and 97 then null
             when i % 100 between 90 and 95 or i % 100 = 99 then now() - ${age}
             else now() - make_interval(days => 10 + i % 700) end,
        case when i % 100 >= 98 then now() - ${age} end,
        now() - make_interval(days => 10 + i % 700)
      from generate_series(1, ${total}) i`);
    await db.sql.unsafe(`
      insert into intake_sync.outbox (feed, external_id, kind, state, completed_at, created_at)
      select case when i % 2 = 0 then 'clinic-a' else 'clinic-b' end, 'rx-' || i, 'send', 'delivered',
        case when i % 100 between 96 and 97 then now() - ${age} else now() - make_interval(days => 10 + i % 700) end,
        now() - make_interval(days => 10 + i % 700)
      from generate_series(1, ${total}) i`);
    await db.sql.unsafe(`
      insert into intake_sync.outbox (feed, external_id, kind, state, completed_at)
      select case when i % 2 = 0 then 'clinic-a' else 'clinic-b' end, 'rx-' || i, 'cancel', 'delivered', now() - ${age}
      from generate_series(1, ${total}) i where i % 100 >= 98`);
    const seedMs = performance.now() - seeded;
    const [stats] = await db.sql<{ n: number }[]>`select count(*)::int as n from pg_stats where schemaname = 'intake_sync'`;
    const source = overdueSource(db.database);
    const measure = async (label: string) => {
      const times: number[] = [];
      let rows = 0;
      for (let i = 0; i < scrapes; i++) {
        const started = performance.now();
        const result = await source();
        times.push(performance.now() - started);
        rows = result.reduce((sum, r) => sum + r.count, 0);
      }
      times.sort((a, b) => a - b);
      console.log(
        `| ${label} | ${scrapes} | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 95).toFixed(1)} | ${(times.at(-1) ?? 0).toFixed(1)} | ${rows} |`,
      );
      return percentile(times, 95);
    };
    console.log(
      `bench:overdue: ${total} prescriptions on ${FEEDS.length} feeds, seeded in ${(seedMs / 1000).toFixed(1)} s; load average ${loadavg()[0]?.toFixed(1)}`,
    );
    console.log('| statistics | scrapes | p50 ms | p95 ms | max ms | overdue |');
    console.log('| --- | --- | --- | --- | --- | --- |');
    const explain = async () => {
      if (!process.argv.includes('--explain')) return;
      const plan = await db.sql.unsafe(
        'explain (analyze, costs off) select feed, stage, count(*) from intake_sync.overdue_prescriptions group by feed, stage',
      );
      for (const row of plan) console.log(String(Object.values(row)[0]));
    };
    await explain();
    const cold = await measure(`none (${stats?.n ?? 0} pg_stats rows)`);
    await db.sql.unsafe('analyze intake_sync.prescriptions; analyze intake_sync.outbox; analyze intake_sync.feed_deadlines');
    await explain();
    const warm = await measure('after ANALYZE');
    const worst = Math.max(cold, warm);
    console.log(`bench:overdue: p95 ${worst.toFixed(1)} ms (target <= 20 ms): ${worst <= 20 ? 'within' : 'OVER'}`);
    process.exitCode = worst <= 20 ? 0 : 1;
  } finally {
    await db.close(keep);
  }
}

process.once('SIGINT', () => {
  void dropUndroppedDatabases().finally(() => process.exit(130));
});
await main();
