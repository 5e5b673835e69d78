// `npm run bench:change-poll` (issue 25 §6): a caught-up status_changes_since() poll by an app role
// granted one quiet feed, beside a busy feed's 100,000 changes, on a fresh database of the real
// server with no statistics gathered (autovacuum is off on the test machines; nothing is ANALYZEd).
// Reports the poll's median and p95 against the 50 ms budget, and the same poll by the owner (every
// feed, the unchanged global path) for scale. Options:
//   --busy N        changes of the busy feed (default 100000)
//   --per-commit N  changes per commit of the busy feed (default 100)
//   --polls N       timed polls (default 50)
//   --keep          keep the database (the role is dropped)
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import postgres from 'postgres';
import { grantsScript } from '../src/db/grants-script.js';
import { registerFeeds } from '../src/db/feed-registry.js';
import { createBenchDatabase, DEFAULT_SERVER_URL, dropUndroppedDatabases } from './database.js';

const QUIET = 'clinic-a';
const BUSY = 'clinic-b';
const BUDGET_MS = 50;

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  if (index < 0) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name}: must be a positive whole number`);
  return value;
}

const busy = option('--busy', 100_000);
const perCommit = option('--per-commit', 100);
const polls = option('--polls', 50);
const keep = process.argv.includes('--keep');

/** One commit of `count` prescriptions inserted with a status: `count` changes of `feed`. */
async function commitChanges(sql: postgres.Sql, feed: string, prefix: string, count: number): Promise<void> {
  await sql.unsafe(
    `insert into intake_sync.prescriptions (external_id, patient_first_name, patient_last_name, patient_state, patient_dob,
       prescriber_npi, written_date, drug_ndc, identity_key, status, feed)
     select $1 || '-' || g, 'F', 'L', 'CA', '1980-01-01', '1234567890', '2024-01-01', '00000000000', $1 || g, 'accepted', $2
     from generate_series(1, $3::int) g`,
    [prefix, feed, count],
  );
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

async function timePolls(sql: postgres.Sql, cursor: string | null): Promise<{ median: number; p95: number; rows: number }> {
  const times: number[] = [];
  let rows = 0;
  for (let i = 0; i < polls; i++) {
    const started = performance.now();
    const result = await sql`select cursor from intake_sync.status_changes_since(${cursor}, 1000)`;
    times.push(performance.now() - started);
    rows = result.length;
  }
  times.sort((a, b) => a - b);
  return { median: quantile(times, 0.5), p95: quantile(times, 0.95), rows };
}

async function main(): Promise<void> {
  const serverUrl = process.env.DATABASE_URL ?? DEFAULT_SERVER_URL;
  const suffix = randomBytes(3).toString('hex');
  const role = `bench_poll_app_${suffix}`;
  const db = await createBenchDatabase(serverUrl, `bench_change_poll_${suffix}`);
  let app: postgres.Sql | undefined;
  try {
    await registerFeeds(db.database.db, [QUIET, BUSY], null);
    await db.sql.unsafe(`create role "${role}" login`);
    // the grants script is one transaction of its own: postgres.js takes it on a single connection only
    const granter = postgres(db.url, { max: 1, onnotice: () => {} });
    await granter
      .unsafe(grantsScript('app', 'intake_sync', role, { kind: 'feeds', feeds: [QUIET] }).join('\n'))
      .finally(() => granter.end());
    await commitChanges(db.sql, QUIET, 'quiet-1', 5);
    const url = new URL(db.url);
    url.username = role;
    app = postgres(url.toString(), { max: 1, onnotice: () => {} });
    // the quiet feed's app is caught up before the busy feed commits
    const seen = await app<{ cursor: string }[]>`select cursor from intake_sync.status_changes_since(null, 1000)`;
    const caughtUp = seen.at(-1)?.cursor ?? null;
    const filling = performance.now();
    for (let done = 0, n = 0; done < busy; done += perCommit, n++) {
      await commitChanges(db.sql, BUSY, `busy-${n}`, Math.min(perCommit, busy - done));
    }
    const fillS = (performance.now() - filling) / 1000;
    const [stats] = await db.sql<{ n: number }[]>`select count(*)::int as n from pg_stats where schemaname = 'intake_sync'
      and tablename in ('status_changes', 'change_commits', 'change_commit_feeds')`;
    console.log(
      `${busy} changes of ${BUSY} in ${Math.ceil(busy / perCommit)} commits (${fillS.toFixed(1)} s); statistics rows: ${stats?.n ?? 0}`,
    );
    const quiet = await timePolls(app, caughtUp);
    console.log(
      `caught-up poll of ${QUIET} by its app role: median ${quiet.median.toFixed(2)} ms, p95 ${quiet.p95.toFixed(2)} ms (${polls} polls, ${quiet.rows} rows)`,
    );
    // for scale: the owner sees every feed, so from the same cursor it reads the busy feed's first page
    const owner = await timePolls(db.sql, caughtUp);
    console.log(`the same cursor by the owner (every feed, a 1000-row page): median ${owner.median.toFixed(2)} ms`);
    const verdict = quiet.p95 < BUDGET_MS ? 'within' : 'OVER';
    console.log(`${verdict} the ${BUDGET_MS} ms budget (p95)`);
    if (quiet.p95 >= BUDGET_MS) process.exitCode = 1;
  } finally {
    await app?.end({ timeout: 5 });
    await db.close(keep);
    const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop role if exists "${role}"`).catch(() => {});
    await admin.end({ timeout: 5 });
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void dropUndroppedDatabases().finally(() => process.exit(130));
  });
}

main()
  .catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  })
  .finally(() => dropUndroppedDatabases());
