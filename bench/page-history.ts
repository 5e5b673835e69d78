import { performance } from 'node:perf_hooks';
import type postgres from 'postgres';
import { PAGE_FEED } from './page-fixture.js';

const BATCH = 1_000_000;
// from this size the history is inserted with events' indexes dropped and built after, each by one sort
// (parallel workers): at 10M, inserting into the live indexes took 589 s, most of it reading index leaves
const BULK_FROM = 5_000_000;

export interface TableIndex {
  name: string;
  definition: string;
  constraint: string | null;
}

/** Drops every index of `table` (the primary key included) and returns how to build each again. */
export async function dropIndexes(sql: postgres.Sql, table: 'events' | 'status_changes'): Promise<TableIndex[]> {
  const relation = `intake_sync.${table}`;
  const indexes = await sql<TableIndex[]>`
    select i.indexrelid::regclass::text as name, pg_get_indexdef(i.indexrelid) as definition,
      case when c.oid is not null then pg_get_constraintdef(c.oid) end as constraint
    from pg_index i left join pg_constraint c on c.conindid = i.indexrelid and c.conrelid = i.indrelid
    where i.indrelid = ${relation}::regclass order by 1`;
  for (const index of indexes) {
    const bare = index.name.replace(/^intake_sync\./, '');
    await sql.unsafe(index.constraint ? `alter table ${relation} drop constraint ${bare}` : `drop index ${index.name}`);
  }
  return indexes;
}

/** Builds what dropIndexes dropped, each index by one sort. */
export async function buildIndexes(sql: postgres.Sql, table: 'events' | 'status_changes', indexes: TableIndex[]): Promise<void> {
  await sql`set maintenance_work_mem = '1GB'`;
  for (const index of indexes) {
    const bare = index.name.replace(/^intake_sync\./, '');
    await sql.unsafe(index.constraint ? `alter table intake_sync.${table} add constraint ${bare} ${index.constraint}` : index.definition);
  }
  await sql`reset maintenance_work_mem`;
}

/**
 * Seeds `events` events of history into the page's feed directly in SQL, shaped like a year of a
 * retained install: received over the last 360 days in order, 99% matched to the untouched filler
 * prescriptions, 1% held (no prescription); bodies kept for the last 30 days only (the default
 * RETAIN_EVENT_BODIES strips older ones), each a 200-byte raw body and an empty payload. Ids and
 * subscription ids are hex digests under the pages' own prefixes, so they interleave with the pages' keys. Then prints the
 * size of each events index, the history's cost on disk. From BULK_FROM events the indexes are dropped
 * first and built after the inserts.
 */
export async function seedHistory(sql: postgres.Sql, events: number, bulkFrom = BULK_FROM): Promise<void> {
  const started = performance.now();
  const [range] = await sql<Array<{ low: string; high: string }>>`
    select min(id)::text as low, max(id)::text as high from intake_sync.prescriptions where external_id like 'filler-%'`;
  const low = Number(range?.low ?? 1);
  const span = Math.max(1, Number(range?.high ?? 1) - low + 1);
  const dropped = events >= bulkFrom ? await dropIndexes(sql, 'events') : [];
  for (let from = 0; from < events; from += BATCH) {
    const to = Math.min(events, from + BATCH) - 1;
    await sql`
      insert into intake_sync.events (id, feed, name, occurred_at, subscription_id, api_version, payload, raw, identity_key,
        erx_message_id, status_rank, prescription_id, received_at)
      select k.id, ${PAGE_FEED}, 'accepted', at, k.subscription, '2024-12-10',
        case when fresh then '{}'::jsonb end,
        case when fresh then json_build_object('id', k.id, 'name', 'accepted', 'pad', repeat('x', 120)) end,
        case when held and fresh then 'held' || g end, null, 1,
        case when held then null else ${low}::bigint + g % ${span}::bigint end, at
      from generate_series(${from}::bigint, ${to}::bigint) g,
        lateral (select now() - interval '360 days' + (g::float8 / ${events}::float8) * interval '360 days' as at) t,
        lateral (select g % 100 = 0 as held, t.at > now() - interval '30 days' as fresh) f,
        -- hex keys: they sort among the pages' evt_<n> and sub_<n>, so a page's inserts land all over the
        -- primary key and (subscription_id, feed) as an operator's unordered ids do, not in a corner of their own
        lateral (select 'evt_' || md5('h' || g) as id, 'sub_' || left(md5('s' || (g % 50000)), 12) as subscription) k`;
  }
  if (dropped.length > 0) {
    const built = performance.now();
    await buildIndexes(sql, 'events', dropped);
    console.log(
      `history: ${dropped.length} events indexes built in ${((performance.now() - built) / 1000).toFixed(0)} s (bulk seed: built by sort, so packed tighter than grown ones)`,
    );
  }
  await sql`checkpoint`;
  const sizes = await sql<Array<{ name: string; mb: string }>>`
    select indexrelid::regclass::text as name, round(pg_relation_size(indexrelid) / 1048576.0, 1)::text as mb
    from pg_index where indrelid = 'intake_sync.events'::regclass order by pg_relation_size(indexrelid) desc`;
  const heap = await sql<Array<{ mb: string }>>`select round(pg_relation_size('intake_sync.events') / 1048576.0, 1)::text as mb`;
  console.log(`history: ${events} events seeded in ${((performance.now() - started) / 1000).toFixed(0)} s; heap ${heap[0]?.mb} MB`);
  for (const { name, mb } of sizes) console.log(`  ${name}: ${mb} MB`);
}
