// `npm run bench:console` (issue 29 §8): every operator-console page's server time at size (default
// 1M events, 100k open findings, 200k prescriptions), on a fresh database with NO planner statistics
// (autovacuum is off here, and a restored or bulk-loaded database looks the same), then with --analyze
// after ANALYZE. The console runs in-process on a loopback socket; an app role granted one feed signs in
// through the sign-in form (CSRF cookie and field) and requests each page `--requests` times. The
// console sets no Server-Timing header, so the time is the client's, request to last body byte, on
// loopback: the server's time plus a loopback round trip. Target: every page's p95 <= 300 ms. Options:
//   --events N     events across two feeds (default 1000000; findings are a ninth of them)
//   --requests N   requests per page (default 20)
//   --analyze      ANALYZE the tables before measuring
//   --both         measure with no statistics, then ANALYZE and measure again, on the same seed
//   --explain      print EXPLAIN ANALYZE of the quarantine list's default query first
//   --keep         keep the database
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import postgres from 'postgres';
import { grantsScript } from '../src/db/grants-script.js';
import { composeConsole } from '../src/console/compose.js';
import { type RunningConsole, startConsole } from '../src/console/server.js';
import { registerFeeds } from '../src/db/feed-registry.js';
import { createLogger } from '../src/log/log.js';
import { writeFeedDeadlines } from '../src/store-api/overdue/feed-deadlines.js';
import { DEFAULT_STAGE_DEADLINES } from '../src/config/overdue-deadlines.js';
import { runBench } from './bench-main.js';
import { seedConsole, FEEDS } from './console-seed.js';
import { signIn, timePage } from './console-client.js';
import { type BenchDatabase, createBenchDatabase, DEFAULT_SERVER_URL, dropUndroppedDatabases } from './database.js';

function option(name: string, fallback: number, min = 1): number {
  const index = process.argv.indexOf(name);
  if (index < 0) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value < min || value > 10_000_000)
    throw new Error(`${name}: must be a whole number from ${min} to 10000000`);
  return value;
}

const TARGET_MS = 300;

/** The pages measured: label and path, for the role granted clinic_a (event 18 is an open finding there). */
function pages(prescriptions: number): [string, string][] {
  const rx = `rx-${Math.floor(prescriptions / 2) * 2 - 1000}`; // an even k: clinic_a
  return [
    ['feeds /', '/'],
    ['quarantine', '/quarantine'],
    ['quarantine feed+reason', '/quarantine?feed=clinic_a&reason=ambiguous'],
    ['quarantine event name', '/quarantine?event_name=dispensed'],
    ['quarantine age 30d', '/quarantine?age=30d'],
    ['quarantine q=event id', '/quarantine?q=ev-18'],
    ['quarantine q=subscription', '/quarantine?q=sub-h-18'],
    ['quarantine q=external_id', `/quarantine?q=${rx}`],
    ['finding', '/quarantine/clinic_a/ev-18'],
    ['prescriptions q=', `/prescriptions?q=${rx}`],
    ['prescription', `/prescriptions/clinic_a/${rx}`],
    ['audit', '/audit'],
    ['audit action+feed', '/audit?action=quarantine.dismissed&feed=clinic_a'],
    ['overdue', '/overdue'],
    ['dismiss-all (count)', '/quarantine/dismiss-all?feed=clinic_a&reason=unmatched'],
  ];
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function main(): Promise<void> {
  const events = option('--events', 1_000_000, 90);
  const requests = option('--requests', 20);
  const keep = process.argv.includes('--keep');
  const both = process.argv.includes('--both');
  const analyze = process.argv.includes('--analyze');
  const serverUrl = process.env.DATABASE_URL ?? DEFAULT_SERVER_URL;
  const role = `bench_console_${randomBytes(4).toString('hex')}`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  let db: BenchDatabase | undefined;
  let running: RunningConsole | undefined;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    db = await createBenchDatabase(serverUrl, `bench_console_${randomBytes(4).toString('hex')}`);
    await registerFeeds(db.database.db, [...FEEDS], null);
    await writeFeedDeadlines(
      db.database.db,
      FEEDS.map((feed) => ({ feed, deadlines: DEFAULT_STAGE_DEADLINES })),
    );
    const started = performance.now();
    const seeded = await seedConsole(db.sql, events);
    const seedS = (performance.now() - started) / 1000;
    await admin.unsafe(`create role "${role}" login password '${password}'`);
    // the grants script is one transaction: a single connection of its own
    const owner = postgres(db.url, { max: 1, onnotice: () => {} });
    await owner
      .unsafe(grantsScript('app', 'intake_sync', role, { kind: 'feeds', feeds: ['clinic_a'] }).join('\n'))
      .finally(() => owner.end({ timeout: 5 }));
    if (analyze && !both) await db.sql.unsafe('analyze');
    if (process.argv.includes('--explain')) {
      const plan = await db.sql.unsafe(
        'explain (analyze, costs off) select * from intake_sync.quarantine_open q order by held_since desc, feed desc, quarantine_key desc limit 51',
      );
      for (const row of plan) console.log(String(Object.values(row)[0]));
    }
    const deps = composeConsole(
      { databaseUrl: db.url, schema: 'intake_sync', host: '127.0.0.1', idleTimeoutMs: 60 * 60_000 },
      createLogger({ level: 'silent' }),
    );
    running = await startConsole(deps, '127.0.0.1', 0);
    const session = await signIn(running.url, role, password);
    // the closure's own constants (a `let` is not narrowed inside it)
    const database = db;
    const url = running.url;
    const measure = async (statistics: string): Promise<number> => {
      const [stats] = await database.sql<{ n: number }[]>`select count(*)::int as n from pg_stats where schemaname = 'intake_sync'`;
      console.log(
        `bench:console: ${seeded.events} events, ${seeded.openFindings} open findings (${seeded.resolvedFindings} resolved), ` +
          `${seeded.prescriptions} prescriptions on ${FEEDS.length} feeds, seeded in ${seedS.toFixed(1)} s; ` +
          `statistics: ${statistics} (${stats?.n ?? 0} pg_stats rows); ${requests} requests a page; ` +
          `client time on loopback (no Server-Timing header); load average ${loadavg()[0]?.toFixed(1)}`,
      );
      console.log('| page | p50 ms | p95 ms | max ms | status |');
      console.log('| --- | --- | --- | --- | --- |');
      let worst = 0;
      for (const [label, path] of pages(seeded.prescriptions)) {
        const times: number[] = [];
        let status = 0;
        for (let i = 0; i < requests; i++) {
          const timed = await timePage(url, path, session);
          times.push(timed.ms);
          status = timed.status;
        }
        times.sort((a, b) => a - b);
        const p95 = percentile(times, 95);
        worst = Math.max(worst, p95);
        console.log(
          `| ${label} | ${percentile(times, 50).toFixed(1)} | ${p95.toFixed(1)} | ${(times.at(-1) ?? 0).toFixed(1)} | ${status} |`,
        );
        if (status !== 200) throw new Error(`${path}: answered ${status}`);
      }
      console.log(
        `bench:console: worst p95 ${worst.toFixed(1)} ms (target <= ${TARGET_MS} ms): ${worst <= TARGET_MS ? 'within' : 'OVER'}; load average ${loadavg()[0]?.toFixed(1)}`,
      );
      return worst;
    };
    let worst = await measure(analyze && !both ? 'after ANALYZE' : 'none');
    if (both) {
      await database.sql.unsafe('analyze');
      worst = Math.max(worst, await measure('after ANALYZE'));
    }
    process.exitCode = worst <= TARGET_MS ? 0 : 1;
  } finally {
    await running?.close().catch(() => {});
    await db?.close(keep).catch(() => {});
    // a database whose migration failed was created but never handed back: drop it too
    if (!keep) await dropUndroppedDatabases();
    if (!keep) await admin.unsafe(`drop role if exists "${role}"`).catch(() => {});
    await admin.end({ timeout: 5 });
  }
}

await runBench('bench:console', main);
