import type postgres from 'postgres';
import { PAGE_FEED } from './page-fixture.js';
import { cachedPlanRunner } from './page-statements.js';

/** The minimal page's runner: its statement as static SQL, planned as the product's is (cachedPlanRunner). */
export const MINIMAL_RUNNER = 'public.bench_minimal_run';

/**
 * The minimal page (issue 37): an honest best at the page's durable promises, written from scratch in
 * schema `minimal`, run beside the product's page in the same bench run:
 * - each event stored once with its raw body as received (json text, parsed by nothing), keyed (feed, id),
 *   a replay skipped; one (feed, received_at) index, which retention needs to find old rows;
 * - matched by identity key on (feed, identity_key);
 * - the status moved forward only (best rank per prescription), on a fillfactor 70 table with no index on
 *   a status column, so the update can be HOT;
 * - one change row per status change, readable by commit (xid, feed, id);
 * - the commit stamped in its feed's change clock as 0030 does (the clock row locked to the end of the
 *   commit, commit_seq drawn from the feed's sequence, one commit row);
 * - the checkpoint compared-and-set at its version.
 * No triggers: every write is a CTE of the one statement.
 */
const DDL = `
create schema minimal;
create table minimal.prescriptions (
  id bigint primary key, feed text not null, identity_key text, status text, status_rank int not null default 0,
  status_occurred_at timestamptz, status_event_id text, updated_at timestamptz not null default now()
) with (fillfactor = 70);
create index on minimal.prescriptions (feed, identity_key);
create table minimal.events (
  feed text not null, id text not null, name text not null, occurred_at timestamptz not null, status_rank int,
  prescription_id bigint, received_at timestamptz not null, raw json, primary key (feed, id)
);
create index on minimal.events (feed, received_at);
create table minimal.status_changes (
  id bigint generated always as identity primary key, xid xid8 not null default pg_current_xact_id(), feed text not null,
  prescription_id bigint not null, previous_status text, new_status text not null, event_id text, occurred_at timestamptz
);
create index on minimal.status_changes (xid, feed, id);
create table minimal.change_clocks (feed text primary key);
create sequence minimal.change_clock_page;
create table minimal.change_commits (feed text not null, commit_seq bigint not null, xid xid8 not null, committed_at timestamptz not null);
create index on minimal.change_commits (feed, commit_seq);
create table minimal.checkpoints (feed text primary key, iterator text, version bigint not null default 0, events_applied bigint not null default 0);
insert into minimal.change_clocks values ('${PAGE_FEED}');
insert into minimal.checkpoints (feed) values ('${PAGE_FEED}');
insert into minimal.prescriptions (id, feed, identity_key)
  select id, feed, identity_key from intake_sync.prescriptions;
`;

const MINIMAL_PAGE = `
with cas as materialized (
  select version from minimal.checkpoints where feed = '${PAGE_FEED}' and version = $2 for update
),
ev as materialized (
  select r.* from cas cross join json_to_recordset($1) as r(id text, name text, occurred_at timestamptz, identity_key text, status_rank int, raw json)
),
matched as materialized (
  select ev.*, (select p.id from minimal.prescriptions p where p.feed = '${PAGE_FEED}' and p.identity_key = ev.identity_key limit 1) as prescription_id
  from ev
),
inserted as (
  insert into minimal.events (feed, id, name, occurred_at, status_rank, prescription_id, received_at, raw)
  select '${PAGE_FEED}', id, name, occurred_at, status_rank, prescription_id, now(), raw from matched
  on conflict (feed, id) do nothing
  returning id, name, occurred_at, status_rank, prescription_id
),
best as (
  select distinct on (i.prescription_id) i.prescription_id, i.id, i.name, i.occurred_at, i.status_rank, p.status as previous_status
  from inserted i join minimal.prescriptions p on p.id = i.prescription_id
  where i.status_rank is not null
  order by i.prescription_id, i.status_rank desc, i.occurred_at desc, i.id desc
),
advanced as (
  update minimal.prescriptions p set status = b.name, status_rank = b.status_rank, status_occurred_at = b.occurred_at,
    status_event_id = b.id, updated_at = now()
  from best b where p.id = b.prescription_id and b.status_rank > p.status_rank
  returning p.id, p.feed, b.previous_status, b.name, b.id as event_id, b.occurred_at
),
changes as (
  insert into minimal.status_changes (feed, prescription_id, previous_status, new_status, event_id, occurred_at)
  select feed, id, previous_status, name, event_id, occurred_at from advanced order by id
  returning 1
),
clock as (
  select 1 from minimal.change_clocks c where c.feed = '${PAGE_FEED}' and exists (select 1 from changes) for update
),
stamp as (
  insert into minimal.change_commits (feed, commit_seq, xid, committed_at)
  select '${PAGE_FEED}', nextval('minimal.change_clock_page'), pg_current_xact_id(), clock_timestamp() from clock
  returning 1
),
checkpoint as (
  update minimal.checkpoints c set iterator = $3, version = c.version + 1,
    events_applied = c.events_applied + (select count(*) from inserted)
  from cas where c.feed = '${PAGE_FEED}'
  returning c.version
)
select (select version from checkpoint) as version, (select count(*) from stamp) as stamped
`;

/** Creates schema `minimal` (a copy of the prescriptions the pages match) and its runner (MINIMAL_RUNNER). */
export async function installMinimalPage(sql: postgres.Sql): Promise<void> {
  await sql.unsafe(DDL);
  await sql.unsafe(
    cachedPlanRunner(MINIMAL_RUNNER, {
      versionOf: `select version from minimal.checkpoints where feed = '${PAGE_FEED}'`,
      page: MINIMAL_PAGE,
    }),
  );
}
