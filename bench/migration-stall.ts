import { performance } from 'node:perf_hooks';
import postgres from 'postgres';
import { openDatabase } from '../src/db/connection.js';
import { runMigrations } from '../src/db/migrate.js';
import { readMigrationFiles } from '../src/db/migration-files.js';
import { SQL_API_LEDGER_TABLE } from '../src/db/sql-api-files.js';
import { PAGE_FEED } from './page-fixture.js';

/**
 * How long an upgrade step stops a feed (issue 37 §5: no lock may stop the feed for more than 2 s on a
 * table of 50M events). While the step runs on one connection, a probe on another commits page-shaped
 * transactions back to back: an event inserted, a prescription's first status (the change trigger, the
 * outbox answer, the commit stamp), the checkpoint row updated, the locks a page takes. The longest probe
 * is the longest the feed stood still.
 */
export interface StallReport {
  step: string;
  seconds: number;
  probes: number;
  p50Ms: number;
  maxMs: number;
}

const LOCK_TIMEOUT = "set lock_timeout = '10min'";

async function untouchedPrescriptions(sql: postgres.Sql): Promise<string[]> {
  const rows = await sql<Array<{ id: string }>>`
    select id::text from intake_sync.prescriptions where feed = ${PAGE_FEED} and status_rank = 0 order by id limit 200000`;
  return rows.map((r) => r.id);
}

/** Runs `step` on a connection of its own while the probe commits; the probe's durations, and the step's. */
export async function measureStall(url: string, step: string, work: (sql: postgres.Sql) => Promise<unknown>): Promise<StallReport> {
  const probe = postgres(url, { max: 1, onnotice: () => {} });
  const worker = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await probe.unsafe(LOCK_TIMEOUT);
    const free = await untouchedPrescriptions(probe);
    const durations: number[] = [];
    let done = false;
    let n = 0;
    const probing = (async () => {
      // two more probes once the step has ended, so a step that ends at once still shows the feed moving
      let after = 0;
      while (after < 2) {
        const prescription = free[n % free.length];
        const id = `stall_${Date.now()}_${n++}`;
        const started = performance.now();
        await probe.begin(async (tx) => {
          await tx`insert into intake_sync.events (id, feed, name, occurred_at, subscription_id, api_version, raw, status_rank,
              prescription_id, received_at)
            values (${id}, ${PAGE_FEED}, 'accepted', now(), 'sub_stall', '2024-12-10', ${JSON.stringify({ id })}::json, 1,
              ${prescription ?? null}::bigint, now())`;
          await tx`update intake_sync.prescriptions set status = 'accepted', status_rank = 1, status_occurred_at = now(),
              status_event_id = ${id}, updated_at = now()
            where id = ${prescription ?? null}::bigint and status_rank < 1`;
          await tx`update intake_sync.feed_checkpoints set updated_at = now() where feed = ${PAGE_FEED}`;
        });
        durations.push(performance.now() - started);
        if (done) after++;
      }
    })();
    const started = performance.now();
    try {
      await worker.unsafe(LOCK_TIMEOUT);
      await work(worker);
    } finally {
      done = true;
      await probing;
    }
    const seconds = (performance.now() - started) / 1000;
    const sorted = [...durations].sort((a, b) => a - b);
    return {
      step,
      seconds,
      probes: durations.length,
      p50Ms: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN,
      maxMs: sorted.at(-1) ?? Number.NaN,
    };
  } finally {
    await probe.end({ timeout: 5 });
    await worker.end({ timeout: 5 });
  }
}

// 0028's statement as shipped: a plain CREATE INDEX holds a SHARE lock on events for the whole build
const SUBSCRIPTION_INDEX =
  'CREATE INDEX IF NOT EXISTS "events_subscription_feed_idx" ON "intake_sync"."events" USING btree ("subscription_id", "feed")';

/**
 * Puts the page path's own migrations (0034, 0035) and every SQL API file back to "not applied", with
 * the objects they drop recreated, so `migrate` does the work an install upgrading to this release does.
 */
async function rewindPagePath(sql: postgres.Sql): Promise<void> {
  const tags = ['0034_page_path', '0035_open_findings_by_reason'];
  const hashes = readMigrationFiles()
    .filter((f) => tags.includes(f.tag))
    .map((f) => f.hash);
  await sql`create index if not exists prescriptions_external_id_idx on intake_sync.prescriptions (external_id)`;
  await sql`drop index if exists intake_sync.quarantine_open_reason_idx`;
  await sql`create index if not exists quarantine_open_idx on intake_sync.quarantine (reason) where resolved_at is null`;
  await sql`delete from intake_sync.__drizzle_migrations where hash in ${sql(hashes)}`;
  await sql.unsafe(`delete from intake_sync.${SQL_API_LEDGER_TABLE}`);
}

/**
 * The upgrade steps that lock events, each beside the probe, on the database at `url` (bench:page's
 * largest history copy): 0028's index build as shipped, the same build CONCURRENTLY (the maintenance step
 * docs/upgrading.md gives, after which 0028's IF NOT EXISTS is a no-op), and `migrate` applying the page
 * path's migrations and every SQL API file.
 */
export async function migrationStalls(url: string): Promise<StallReport[]> {
  const reports: StallReport[] = [];
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await admin`set maintenance_work_mem = '256MB'`;
    await admin.unsafe('DROP INDEX CONCURRENTLY IF EXISTS intake_sync.events_subscription_feed_idx');
    reports.push(await measureStall(url, "0028's index on events as shipped (CREATE INDEX)", (sql) => sql.unsafe(SUBSCRIPTION_INDEX)));
    await admin.unsafe('DROP INDEX CONCURRENTLY IF EXISTS intake_sync.events_subscription_feed_idx');
    reports.push(
      await measureStall(url, 'the same index CONCURRENTLY (maintenance step)', (sql) =>
        sql.unsafe(SUBSCRIPTION_INDEX.replace('CREATE INDEX IF NOT EXISTS', 'CREATE INDEX CONCURRENTLY IF NOT EXISTS')),
      ),
    );
    reports.push(await measureStall(url, "then 0028's statement (IF NOT EXISTS: no build)", (sql) => sql.unsafe(SUBSCRIPTION_INDEX)));
    await rewindPagePath(admin);
  } finally {
    await admin.end({ timeout: 5 });
  }
  reports.push(
    await measureStall(url, 'migrate: 0034, 0035 and every SQL API file', async () => {
      const database = await openDatabase({ url });
      try {
        await runMigrations(database);
      } finally {
        await database.close();
      }
    }),
  );
  return reports;
}

/** The table docs/performance.md takes. */
export function printStalls(reports: StallReport[], events: number, changes = 0): void {
  console.log(`\nupgrade steps beside a committing feed, ${events} events and ${changes} change rows of history\n`);
  console.log('| step | took, s | probes | probe p50, ms | longest probe (the feed stood still), ms |');
  console.log('|---|---:|---:|---:|---:|');
  for (const r of reports) {
    console.log(`| ${r.step} | ${r.seconds.toFixed(2)} | ${r.probes} | ${r.p50Ms.toFixed(1)} | ${r.maxMs.toFixed(0)} |`);
  }
}
