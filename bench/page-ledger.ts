// `npm run bench:page` (issue 37): the cost ledger of the page. The product's page statement alone (no
// client: a procedure runs the lock statement, the page statement and COMMIT per page), once as shipped,
// once with each index and trigger of the page path switched off in turn, then in groups and all at once
// (the floor: what the statement itself costs; page-variants.ts), once with the overdue index replaced by
// a stage table (bench/overdue-stage-sketch.ts), and a minimal page doing the same durable work
// (bench/page-minimal.ts), each in its own copy of one seeded scratch database, interleaved round by
// round so a loaded machine slows them alike. Reports
// ms/page (median of rounds), WAL bytes/page (pg_current_wal_lsn diff, lowest round: the counter is the
// cluster's, other sessions only add to it; and the median of the records that touch the copy's own blocks,
// read with pg_walinspect) and the HOT share of prescription updates. Options:
//   --rounds N    rounds (default 3)            --pages N     pages per variant per round (default 20)
//   --filler N    untouched prescriptions in the feed (default 100000)
//   --history N   also run the product with N events of history seeded in SQL (repeatable)
//   --only TEXT   only variants whose name contains TEXT (plus the product and the minimal page);
//                 `switchable`: the groups and the floor, `stage`: the stage table sketch
//   --drain N     also drain N sandbox events with the daemon's worker once per round (bench/page-drain.ts),
//                 reported against the minimal page of the same rounds
//   --migration-probe  after the rounds, the upgrade steps that lock events, each beside a committing
//                 feed, on the largest history copy (bench/migration-stall.ts)
//   --change-history N  with --migration-probe: first seed N rows of change history into that copy and
//                 measure the steps that lock status_changes (0031, 0033; bench/change-history.ts)
//   --renumber    with --change-history: 0032's renumbering of every change row too (minutes at 10M+)
//   --keep        keep the scratch databases
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import postgres from 'postgres';
import { createBenchDatabase, DEFAULT_SERVER_URL, dropUndroppedDatabases } from './database.js';
import { PAGE_EVENTS, seedPageFixture } from './page-fixture.js';
import { seedHistory } from './page-history.js';
import { migrationStalls, printStalls, type StallReport } from './migration-stall.js';
import { changeHistoryStalls, seedChangeHistory } from './change-history.js';
import { preparePageDrain, type PageDrain } from './page-drain.js';
import { printLedger, type LedgerRow } from './page-report.js';
import { installMinimalPage, MINIMAL_RUNNER } from './page-minimal.js';
import { installPageRunner, runnerOf, storeVariantStatements } from './page-statements.js';
import { FULL, PLANNED_PER_PAGE, pageVariants, statementsOf, type PageVariant } from './page-variants.js';

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  if (index < 0) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value < 0 || value > 100_000_000) throw new Error(`${name}: must be a whole number from 0 to 100000000`);
  return value;
}

const rounds = Math.max(1, option('--rounds', 3));
const pagesPerRound = Math.max(1, option('--pages', 20));
const filler = option('--filler', 100_000);
const histories = process.argv.flatMap((arg, i) => {
  if (arg !== '--history') return [];
  const events = Number(process.argv[i + 1]);
  if (!Number.isInteger(events) || events < 1 || events > 100_000_000)
    throw new Error('--history: must be a whole number from 1 to 100000000');
  return [events];
});
const only = process.argv.includes('--only') ? (process.argv[process.argv.indexOf('--only') + 1] ?? '') : undefined;
const keep = process.argv.includes('--keep');
const drainEvents = option('--drain', 0);
const migrationProbe = process.argv.includes('--migration-probe');
const changeHistory = option('--change-history', 0);
const renumber = process.argv.includes('--renumber');
if (changeHistory > 0 && !migrationProbe) throw new Error('--change-history: only with --migration-probe');
if (renumber && changeHistory === 0) throw new Error('--renumber: only with --change-history N');
if (drainEvents > 0 && drainEvents < 1_000) throw new Error('--drain: at least 1000 events (0: no drain)');

interface Copy {
  variant: PageVariant;
  url: string;
  sql: postgres.Sql;
  ms: number[];
  /** the copy's backend process, whose CPU time each round reads (backendCpuMs) */
  pid: number;
  cpu: number[];
  wal: number[];
  ownWal: number[];
}

async function runRound(copy: Copy, round: number): Promise<void> {
  const from = round * pagesPerRound + 1;
  const to = from + pagesPerRound - 1;
  const [before] = await copy.sql<Array<{ lsn: string }>>`select pg_current_wal_lsn()::text as lsn`;
  const cpuBefore = await backendCpuMs(copy.pid);
  const started = performance.now();
  const call =
    copy.variant.runs === 'minimal'
      ? `call ${MINIMAL_RUNNER}(${from}, ${to})`
      : copy.variant.planning === 'per page'
        ? `call public.bench_page_run('${statementsOf(copy.variant).replaceAll("'", "''")}', ${from}, ${to})`
        : `call ${runnerOf(statementsOf(copy.variant))}(${from}, ${to})`;
  await copy.sql.unsafe(call).simple();
  copy.ms.push((performance.now() - started) / pagesPerRound);
  copy.cpu.push(((await backendCpuMs(copy.pid)) - cpuBefore) / pagesPerRound);
  const [after] = await copy.sql<Array<{ lsn: string; bytes: string }>>`
    select pg_current_wal_lsn()::text as lsn, pg_wal_lsn_diff(pg_current_wal_lsn(), ${before?.lsn ?? '0/0'}::pg_lsn)::text as bytes`;
  copy.wal.push(Number(after?.bytes) / pagesPerRound);
  // the part of that WAL which touches this database's blocks (pg_walinspect: block references name the
  // database's oid), which other sessions cannot inflate; NaN when a checkpoint recycled the segments first
  const own = await copy.sql<Array<{ own: string }>>`
    select coalesce(sum(record_length), 0)::text as own from pg_get_wal_records_info(${before?.lsn ?? '0/0'}::pg_lsn, ${after?.lsn ?? '0/0'}::pg_lsn)
    where block_ref like '%/' || (select oid from pg_database where datname = current_database()) || '/%'`.catch(() => [{ own: 'NaN' }]);
  copy.ownWal.push(Number(own[0]?.own) / pagesPerRound);
}

/**
 * The CPU time the backend has run, in ms (/proc/<pid>/schedstat, nanoseconds on a CPU): unlike the wall
 * clock, other processes on a loaded machine do not add to it, so a round's CPU per page compares
 * variants where its ms cannot. NaN where the server is not on this machine.
 */
async function backendCpuMs(pid: number): Promise<number> {
  try {
    const text = await readFile(`/proc/${pid}/schedstat`, 'utf8');
    return Number(text.split(' ')[0]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

async function hotShare(copy: Copy): Promise<number | null> {
  await copy.sql`select pg_stat_force_next_flush()`;
  const [row] = await copy.sql<Array<{ upd: string; hot: string }>>`
    select n_tup_upd::text as upd, n_tup_hot_upd::text as hot from pg_stat_user_tables
    where relid = ${copy.variant.prescriptions}::regclass`;
  const updates = Number(row?.upd ?? 0);
  return updates === 0 ? null : Number(row?.hot) / updates;
}

async function main(): Promise<void> {
  const serverUrl = process.env.DATABASE_URL ?? DEFAULT_SERVER_URL;
  const tag = randomBytes(3).toString('hex');
  // round 0 warms each copy (its files were just copied: nothing of it is in shared buffers) and is not reported
  const pages = (rounds + 1) * pagesPerRound;
  const prescriptions = Math.ceil((pages * PAGE_EVENTS) / 4);
  const template = await createBenchDatabase(serverUrl, `bench_page_${tag}`);
  const load = [loadavg()[0] ?? 0];
  const copies: Copy[] = [];
  const opened: Array<Awaited<ReturnType<typeof createBenchDatabase>>> = [];
  const drains: Array<{ eventsPerS: number; peakRssMb: number }> = [];
  let drain: PageDrain | undefined;
  try {
    const seedStarted = performance.now();
    await template.sql`create extension if not exists pg_walinspect`;
    await seedPageFixture(template.sql, prescriptions, filler, pages);
    await installPageRunner(template.sql);
    await installMinimalPage(template.sql);
    const { variants: all, readByThePage } = await pageVariants(template.sql);
    for (const v of all) if (v.runs === 'product' && !v.planning) await storeVariantStatements(template.sql, v.name, v.rewrite);
    const variants = all.filter(
      (v) => only === undefined || v.runs === 'minimal' || v.name === FULL || v.name === PLANNED_PER_PAGE || v.name.includes(only),
    );
    for (const events of histories) {
      variants.push({
        name: `product, ${events} events of history`,
        setup: [],
        runs: 'product',
        prescriptions: 'intake_sync.prescriptions',
        history: events,
      });
    }
    await template.sql`checkpoint`;
    await template.disconnect();
    console.log(
      `seeded ${prescriptions} moved + ${filler} untouched prescriptions, ${pages} pages in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
    );
    for (const [i, variant] of variants.entries()) {
      const db = await createBenchDatabase(serverUrl, `bench_page_${tag}_${i}`, { template: template.name });
      opened.push(db);
      await db.disconnect();
      const sql = postgres(db.url, { max: 1, onnotice: () => {} });
      for (const statement of variant.setup) await sql.unsafe(statement);
      if (variant.history !== undefined) await seedHistory(sql, variant.history);
      await sql`checkpoint`;
      const [backend] = await sql<Array<{ pid: number }>>`select pg_backend_pid() as pid`;
      copies.push({ variant, url: db.url, sql, ms: [], pid: backend?.pid ?? 0, cpu: [], wal: [], ownWal: [] });
    }
    if (drainEvents > 0) drain = await preparePageDrain(serverUrl, tag, drainEvents, filler);
    for (const copy of copies) await runRound(copy, 0);
    for (const copy of copies) copy.ms.splice(0), copy.cpu.splice(0), copy.wal.splice(0), copy.ownWal.splice(0);
    for (let round = 1; round <= rounds; round++) {
      // rotated each round: no variant always runs first, or right after the same neighbour
      for (let k = 0; k < copies.length; k++) {
        const copy = copies[(k + round) % copies.length];
        if (copy) await runRound(copy, round);
      }
      if (drain) drains.push(await drain.run(round));
      load.push(loadavg()[0] ?? 0);
      console.log(`round ${round}/${rounds} done, load ${loadavg()[0]?.toFixed(2)}`);
    }
    const rows: LedgerRow[] = [];
    for (const copy of copies)
      rows.push({ name: copy.variant.name, ms: copy.ms, cpu: copy.cpu, wal: copy.wal, ownWal: copy.ownWal, hot: await hotShare(copy) });
    for (const copy of copies) await copy.sql.end({ timeout: 5 });
    // the largest history copy, or the product's own: its pages are done, so the probe has it alone
    const probed = [...copies]
      .sort((a, b) => (b.variant.history ?? 0) - (a.variant.history ?? 0))
      .find((c) => c.variant.name === FULL || c.variant.history !== undefined);
    const stalls: StallReport[] = [];
    if (migrationProbe && probed && changeHistory > 0) {
      const seeder = postgres(probed.url, { max: 1, onnotice: () => {} });
      try {
        await seedChangeHistory(seeder, changeHistory);
      } finally {
        await seeder.end({ timeout: 5 });
      }
      stalls.push(...(await changeHistoryStalls(probed.url, { renumber })));
    }
    if (migrationProbe && probed) stalls.push(...(await migrationStalls(probed.url)));
    printLedger(rows, { rounds, pagesPerRound, filler, prescriptions, load, readByThePage, drains, drainEvents });
    if (probed && stalls.length > 0) printStalls(stalls, probed.variant.history ?? 0, changeHistory);
  } finally {
    for (const copy of copies) await copy.sql.end({ timeout: 5 }).catch(() => {});
    await drain?.close(keep);
    for (const db of opened) await db.close(keep).catch(() => {});
    await template.close(keep);
  }
}

main().catch(async (error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  await dropUndroppedDatabases();
  process.exitCode = 1;
});
