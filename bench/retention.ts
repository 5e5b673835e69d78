// `npm run bench:retention` (issue 18, part 2): two simulated years of a busy vendor, time-scaled (rows are
// written with an injected clock, nothing waits), once with the default retention and once without, on
// fresh databases of the real server. Reports the schema's size per simulated month and the plateau, then
// the drain with the cleaner running against the drain without it, in the same run. Options:
//   --per-day N   prescriptions a simulated day (default 60: 240 events, 60 sends, 3 unmatched events)
//   --months N    simulated months (default 24)
//   --keep        keep the databases
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config/config.js';
import { namesOf } from '../src/db/store-names.js';
import { sleepUnlessAborted } from '../src/lib/loop-sleep.js';
import { identityOf, samplePrescription } from '../src/sandbox/fixtures.js';
import { applyPage } from '../src/sync/apply/apply-page.js';
import { registerLocalPrescriptions } from '../src/sync/matching/local-prescriptions.js';
import { loadCheckpoint } from '../src/sync/poll/checkpoint.js';
import { purgePass } from '../src/sync/retention/purge-pass.js';
import type { RetentionPolicy } from '../src/sync/retention/retention-classes.js';
import { RETENTION_BATCH, retentionPolicyFrom } from '../src/daemon/worker-settings.js';
import { createBenchDatabase, DEFAULT_SERVER_URL, dropUndroppedDatabases, type BenchDatabase } from './database.js';

const DAY = 86_400_000;
const START = Date.parse('2023-01-01T00:00:00Z');
const FEED = 'default';
const EVENT_NAMES = ['accepted', 'ordered', 'dispensed', 'delivered'] as const;

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  if (index < 0) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name}: must be a positive whole number`);
  return value;
}

const perDay = option('--per-day', 60);
const months = option('--months', 24);
const keep = process.argv.includes('--keep');

function eventOf(id: string, name: string, at: number, identity: unknown): Record<string, unknown> {
  return {
    id,
    name,
    prescription_identity: identity,
    pharmacy_npi: '1689411712',
    occurred_at: new Date(at).toISOString(),
    api_version: '2024-12-10',
    subscription_id: `sub-${id.split('.')[0]}`,
    payload: {},
  };
}

interface Month {
  month: number;
  totalBytes: number;
  /** every table but the vendor's registry (prescriptions) and the outbox rows (one per send, kept) */
  managedBytes: number;
}

async function schemaBytes(db: BenchDatabase): Promise<{ total: number; managed: number }> {
  const rows = await db.sql<{ relname: string; bytes: string }[]>`select c.relname, pg_total_relation_size(c.oid) as bytes
    from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'intake_sync' and c.relkind = 'r'`;
  let total = 0;
  let managed = 0;
  for (const row of rows) {
    total += Number(row.bytes);
    if (row.relname !== 'prescriptions' && row.relname !== 'outbox') managed += Number(row.bytes);
  }
  return { total, managed };
}

/** One simulated day: the vendor registers and sends, the operator's events arrive, the leader's cleaner runs. */
async function simulateDay(db: BenchDatabase, day: number, policy: RetentionPolicy | null): Promise<void> {
  const { db: drizzle } = db.database;
  const at = START + day * DAY;
  const prescriptions = Array.from({ length: perDay }, (_, i) => samplePrescription(day * perDay + i, { prefix: 'rx' }));
  await registerLocalPrescriptions(
    drizzle,
    prescriptions.map((p) => ({ external_id: p.external_id, prescription_identity: identityOf(p) })),
  );
  // the day's sends, delivered (written as the outbox would leave them, at the simulated time)
  await db.sql`insert into intake_sync.outbox (external_id, kind, body, state, attempts, created_at, updated_at, completed_at, next_attempt_at)
    select x->>'external_id', 'send', x, 'delivered', 1, ${new Date(at)}, ${new Date(at)}, ${new Date(at + 60_000)}, ${new Date(at)}
    from jsonb_array_elements(${JSON.stringify(prescriptions)}::text::jsonb) x`;
  const events = prescriptions.flatMap((p, i) =>
    EVENT_NAMES.map((name, k) => eventOf(`${day}-${i}.${k}`, name, at + k * 3_600_000, identityOf(p))),
  );
  // 5% of a day's prescriptions also bring an event nobody registered (unmatched)
  for (let u = 0; u < Math.ceil(perDay / 20); u++) {
    events.push(eventOf(`${day}-u${u}.0`, 'accepted', at, identityOf(samplePrescription(10_000_000 + day * 100 + u))));
  }
  // the feed's own clock (change_commit_feeds.commit_seq, 0027)
  const seqBefore =
    (await db.sql<{ s: string | null }[]>`select max(commit_seq) as s from intake_sync.change_commit_feeds where feed = ${FEED}`)[0]?.s ??
    '0';
  for (let start = 0; start < events.length; start += 250) {
    const { version } = await loadCheckpoint(drizzle, FEED);
    await applyPage(drizzle, {
      feed: FEED,
      expectedVersion: version,
      nextIterator: `d${day}-${start}`,
      events: events.slice(start, start + 250),
      receivedAt: new Date(at + DAY / 2),
    });
  }
  // the commit stamps are the server's clock: move the day's onto the simulated one
  await db.sql`update intake_sync.change_commit_feeds set committed_at = ${new Date(at + DAY / 2)} where feed = ${FEED} and commit_seq > ${seqBefore}`;
  await db.sql`update intake_sync.change_commits c set committed_at = f.committed_at from intake_sync.change_commit_feeds f
    where f.xid = c.xid and f.feed = ${FEED} and f.commit_seq > ${seqBefore}`;
  if (policy) {
    await purgePass(
      { feed: FEED, policy, unscopedAuditMs: policy.audit },
      {
        db: drizzle,
        names: namesOf(drizzle),
        now: at + DAY - 1,
        batch: { ...RETENTION_BATCH, detectWaiters: true },
        sleep: sleepUnlessAborted,
        signal: new AbortController().signal,
      },
    );
  }
}

async function simulate(label: string, policy: RetentionPolicy | null): Promise<{ months: Month[]; db: BenchDatabase; seconds: number }> {
  const db = await createBenchDatabase(
    process.env.DATABASE_URL ?? DEFAULT_SERVER_URL,
    `bench_retention_${label}_${randomBytes(3).toString('hex')}`,
  );
  const started = performance.now();
  const result: Month[] = [];
  for (let month = 1; month <= months; month++) {
    for (let d = 0; d < 30; d++) await simulateDay(db, (month - 1) * 30 + d, policy);
    // a month of autovacuum, in one statement: freed space is reused in both runs alike
    await db.sql.unsafe(
      'vacuum (analyze) intake_sync.events, intake_sync.outbox, intake_sync.quarantine, intake_sync.status_changes, intake_sync.change_commits, intake_sync.audit_entries',
    );
    const bytes = await schemaBytes(db);
    result.push({ month, totalBytes: bytes.total, managedBytes: bytes.managed });
    process.stderr.write(
      `${label}: month ${month}: ${(bytes.total / 1e6).toFixed(1)} MB (${(bytes.managed / 1e6).toFixed(1)} MB managed)\n`,
    );
  }
  return { months: result, db, seconds: (performance.now() - started) / 1000 };
}

/** Events a second through applyPage for `pages` fresh pages of 250, optionally with a cleaner pass running beside. */
async function drainRate(db: BenchDatabase, tag: string, pages: number): Promise<number> {
  const { db: drizzle } = db.database;
  const identity = identityOf(samplePrescription(1, { prefix: 'rx' }));
  const started = performance.now();
  for (let p = 0; p < pages; p++) {
    const { version } = await loadCheckpoint(drizzle, FEED);
    const events = Array.from({ length: 250 }, (_, i) => eventOf(`${tag}-${p}-${i}.0`, 'accepted', START, identity));
    await applyPage(drizzle, { feed: FEED, expectedVersion: version, nextIterator: `${tag}-${p}`, events });
  }
  return (pages * 250) / ((performance.now() - started) / 1000);
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

async function main(): Promise<void> {
  const defaults = retentionPolicyFrom(loadConfig({}));
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  console.log(`retention bench: ${months} simulated months, ${perDay} prescriptions/day (${perDay * 4} events), load average ${load()}`);
  const withRetention = await simulate('with', defaults);
  const without = await simulate('without', null);
  console.log('\nmonth  with retention (total / managed MB)  without (total / managed MB)');
  for (let i = 0; i < months; i++) {
    const a = withRetention.months[i]!;
    const b = without.months[i]!;
    console.log(
      `${String(a.month).padStart(5)}  ${mb(a.totalBytes).padStart(12)} / ${mb(a.managedBytes).padStart(8)}  ${mb(b.totalBytes).padStart(16)} / ${mb(b.managedBytes).padStart(8)}`,
    );
  }
  const plateau = withRetention.months.slice(13).map((m) => m.managedBytes);
  if (plateau.length > 1) {
    console.log(
      `plateau (managed, months 14-${months}): ${mb(Math.min(...plateau))}-${mb(Math.max(...plateau))} MB; ` +
        `without retention month 12 -> ${months}: ${mb(without.months[11]!.managedBytes)} -> ${mb(without.months[months - 1]!.managedBytes)} MB`,
    );
  }

  // the drain beside the cleaner: the database that never purged, so the cleaner has two years to catch up on
  const pages = 60;
  const baseline1 = await drainRate(without.db, 'a', pages);
  const stop = new AbortController();
  const cleaner = purgePass(
    { feed: FEED, policy: defaults, unscopedAuditMs: defaults.audit },
    {
      db: without.db.database.db,
      names: namesOf(without.db.database.db),
      now: START + months * 30 * DAY,
      batch: { ...RETENTION_BATCH, detectWaiters: true },
      sleep: sleepUnlessAborted,
      signal: stop.signal,
    },
  );
  const beside = await drainRate(without.db, 'b', pages);
  stop.abort();
  const cleaned = await cleaner;
  const baseline2 = await drainRate(without.db, 'c', pages);
  const baseline = (baseline1 + baseline2) / 2;
  console.log(
    `drain: ${baseline.toFixed(0)} events/s without the cleaner (${baseline1.toFixed(0)} before, ${baseline2.toFixed(0)} after), ` +
      `${beside.toFixed(0)} events/s with it purging beside (${JSON.stringify(cleaned.counts)}): ratio ${(beside / baseline).toFixed(2)}`,
  );
  console.log(
    `simulation: ${withRetention.seconds.toFixed(0)} s with retention, ${without.seconds.toFixed(0)} s without; load average ${load()}`,
  );
  await withRetention.db.close(keep);
  await without.db.close(keep);
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => dropUndroppedDatabases());
