import { performance } from 'node:perf_hooks';
import postgres from 'postgres';
import { PAGE_FEED } from './page-fixture.js';
import { measureStall, type StallReport } from './migration-stall.js';
import { buildIndexes, dropIndexes } from './page-history.js';

const BATCH = 1_000_000;

/**
 * Seeds `changes` rows of change history into status_changes directly in SQL (a large install's change
 * feed: about one change row per stored event), with the table's indexes dropped first and built after,
 * each by one sort. Rows: the page's feed, the filler prescriptions, four statuses in turn, a commit (xid)
 * per 250 rows as a page writes them, numbered in the feed in id order, one row in a thousand traced.
 * Prints the table's and each index's size.
 */
export async function seedChangeHistory(sql: postgres.Sql, changes: number): Promise<void> {
  const started = performance.now();
  const [range] = await sql<Array<{ low: string; high: string }>>`
    select min(id)::text as low, max(id)::text as high from intake_sync.prescriptions where external_id like 'filler-%'`;
  const low = Number(range?.low ?? 1);
  const span = Math.max(1, Number(range?.high ?? 1) - low + 1);
  const [serial] = await sql<Array<{ next: string }>>`
    select coalesce(max(feed_serial), 0)::text as next from intake_sync.status_changes where feed = ${PAGE_FEED}`;
  const firstSerial = Number(serial?.next ?? 0);
  const dropped = await dropIndexes(sql, 'status_changes');
  // the row trigger numbers rows inserted without a number; these carry theirs
  for (let from = 0; from < changes; from += BATCH) {
    const to = Math.min(changes, from + BATCH) - 1;
    await sql`
      insert into intake_sync.status_changes (xid, prescription_id, external_id, previous_status, new_status, event_id,
        occurred_at, changed_at, feed, feed_serial, trace_id)
      select (1000 + g / 250)::text::xid8, ${low}::bigint + g % ${span}::bigint, 'filler-' || (g % ${span}::bigint),
        (array[null, 'accepted', 'ordered', 'dispensed'])[1 + g % 4], (array['accepted', 'ordered', 'dispensed', 'delivered'])[1 + g % 4],
        'evt_' || md5('c' || g), at, at, ${PAGE_FEED}, ${firstSerial}::bigint + g + 1,
        case when g % 1000 = 0 then md5('t' || g) end
      from generate_series(${from}::bigint, ${to}::bigint) g,
        lateral (select now() - interval '360 days' + (g::float8 / ${changes}::float8) * interval '360 days' as at) t`;
  }
  // the feed's own numbering goes on after the seeded rows, as it would have
  await sql`select pg_catalog.setval(intake_sync._feed_serial_sequence('changes', ${PAGE_FEED}), ${firstSerial + changes}::bigint)`;
  const built = performance.now();
  await buildIndexes(sql, 'status_changes', dropped);
  await sql`checkpoint`;
  const sizes = await sql<Array<{ name: string; mb: string }>>`
    select indexrelid::regclass::text as name, round(pg_relation_size(indexrelid) / 1048576.0, 1)::text as mb
    from pg_index where indrelid = 'intake_sync.status_changes'::regclass order by pg_relation_size(indexrelid) desc`;
  const [heap] = await sql<Array<{ mb: string }>>`select round(pg_relation_size('intake_sync.status_changes') / 1048576.0, 1)::text as mb`;
  console.log(
    `change history: ${changes} rows seeded in ${((performance.now() - started) / 1000).toFixed(0)} s ` +
      `(indexes built in ${((performance.now() - built) / 1000).toFixed(0)} s); heap ${heap?.mb} MB`,
  );
  for (const { name, mb } of sizes) console.log(`  ${name}: ${mb} MB`);
}

// the statements of 0031, 0032 and 0033 that read or rewrite status_changes, as shipped (drizzle/)
const XID_INDEX = 'CREATE INDEX "status_changes_xid_idx" ON "intake_sync"."status_changes" USING btree ("xid","feed","id")';
const TRACE_INDEX =
  'CREATE INDEX "status_changes_trace_id_idx" ON "intake_sync"."status_changes" USING btree ("trace_id") WHERE "trace_id" IS NOT NULL';
const RENUMBER = `UPDATE "intake_sync"."status_changes" s SET "feed_serial" = n."serial"
FROM (SELECT x."id", pg_catalog.row_number() OVER (PARTITION BY x."feed" ORDER BY x."id") AS "serial" FROM "intake_sync"."status_changes" x) n
WHERE s."id" = n."id"`;

/**
 * The upgrade steps that lock status_changes, each in one transaction as `migrate` runs it, beside the
 * probe (a status change is a change row inserted): 0031's rebuild of status_changes_xid_idx (DROP
 * INDEX takes the table's ACCESS EXCLUSIVE lock, held through the build), 0033's partial trace index
 * (SHARE, through a scan of every row), and, with `renumber`, 0032's renumbering of every row (its ADD
 * COLUMN's ACCESS EXCLUSIVE lock, taken here by LOCK TABLE, held through the UPDATE).
 */
export async function changeHistoryStalls(url: string, options: { renumber: boolean }): Promise<StallReport[]> {
  const reports: StallReport[] = [];
  const inTransaction = (statements: string[]) => async (sql: postgres.Sql) => {
    await sql.begin(async (tx) => {
      await tx`set local maintenance_work_mem = '256MB'`;
      for (const statement of statements) await tx.unsafe(statement);
    });
  };
  reports.push(
    await measureStall(
      url,
      "0031's rebuild of status_changes_xid_idx as shipped",
      inTransaction(['DROP INDEX "intake_sync"."status_changes_xid_idx"', XID_INDEX]),
    ),
  );
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe('DROP INDEX CONCURRENTLY IF EXISTS intake_sync.status_changes_trace_id_idx');
  } finally {
    await admin.end({ timeout: 5 });
  }
  reports.push(await measureStall(url, "0033's trace index on status_changes as shipped", inTransaction([TRACE_INDEX])));
  if (options.renumber) {
    reports.push(
      await measureStall(
        url,
        "0032's renumbering of status_changes (its ADD COLUMN's lock held through the UPDATE)",
        inTransaction(['LOCK TABLE "intake_sync"."status_changes" IN ACCESS EXCLUSIVE MODE', RENUMBER]),
      ),
    );
  }
  return reports;
}
