import { DEFAULT_SCHEMA } from '../src/db/schema-name.js';
import { storeNames } from '../src/db/store-names.js';
import { sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type postgres from 'postgres';
import { matchLockShared } from '../src/sync/matching/match-lock.js';
import { matchCandidatesLateral, matchDecisionColumns } from '../src/sync/matching/match-sql.js';
import { insertFillerPrescriptions } from './filler-prescriptions.js';

/** What Postgres alone does with the page-shaped transaction. */
export interface CeilingResult {
  pages: number;
  events: number;
  seconds: number;
  events_per_s: number;
  pages_per_s: number;
}

export const PAGE_SIZE = 250;
const FEED = 'ceiling';

// the production SQL fragments, rendered once, so the ceiling cannot drift from what applyPage() runs
const dialect = new PgDialect();
const NAMES = storeNames(DEFAULT_SCHEMA);
// the filler prescriptions are registered in the feed 'default'
const FILLER_FEED = 'default';
const MATCH_LATERAL = dialect.sqlToQuery(matchCandidatesLateral(NAMES, sql.raw(`'${FILLER_FEED}'::text`))).sql;
const MATCH_DECISION = dialect.sqlToQuery(matchDecisionColumns).sql;
// the feed goes in as its literal: the ceiling's function text has no parameters
const MATCH_LOCK = dialect.sqlToQuery(matchLockShared(NAMES, FEED)).sql.replace('$1', `'${FEED}'`);

/**
 * The page transaction of applyPage() (apply-page-sql.ts) with no client: the shared match lock, the
 * checkpoint row locked at the expected version, the same lateral match per event, ONE statement that
 * inserts the page's 250 events ON CONFLICT DO NOTHING (raw as json), advances each matched prescription
 * to its best new status (forward only), moves the checkpoint with the totals, and COMMIT. Rows come from
 * generate_series instead of a json parameter: no client, no transport. Event g belongs to prescription g mod P at
 * step g div P, so, as in a seeded sandbox backlog (prescriptions received a second apart, steps five
 * minutes apart), each page's 250 events belong to 250 distinct prescriptions and update all of them.
 * The scratch database is migrated like production, so that update fires the change-feed triggers
 * (0003_api_changes.sql) exactly as a page does: 250 status_changes rows, the change_commits row,
 * and at each COMMIT the commit stamp and NOTIFY.
 */
const PROCEDURE = `
create or replace procedure bench_ceiling(p_seconds float8, p_prescriptions int, inout p_pages int default 0)
language plpgsql as $$
declare
  deadline constant timestamptz := clock_timestamp() + make_interval(secs => p_seconds);
  names constant text[] := array['accepted', 'ordered', 'dispensed', 'delivered'];
  checkpoint_version bigint;
  first_event int;
begin
  select version into checkpoint_version from intake_sync.feed_checkpoints where feed = '${FEED}';
  p_pages := 0;
  while clock_timestamp() < deadline loop
    first_event := p_pages * ${PAGE_SIZE};
    perform ${MATCH_LOCK};
    perform 1 from intake_sync.feed_checkpoints where feed = '${FEED}' and version = checkpoint_version for update;
    if not found then
      raise exception 'ceiling checkpoint moved under version %', checkpoint_version;
    end if;
    with page as materialized (
      select 'ceiling_' || g as id, names[(g / p_prescriptions) % 4 + 1] as name, (g / p_prescriptions) % 4 + 1 as status_rank,
             bench_filler_key('ceiling', g % p_prescriptions + 1) as identity_key, null::text as erx_message_id,
             now() - interval '1 hour' + make_interval(mins => 5 * ((g / p_prescriptions) % 4 + 1)) as occurred_at,
             'sub_c_' || (g % p_prescriptions) as subscription_id
      from generate_series(first_event, first_event + ${PAGE_SIZE - 1}) g
    ), matched as (
      select ev.*, ${MATCH_DECISION}
      from page ev
      ${MATCH_LATERAL}
    ), inserted as (
      insert into intake_sync.events (id, feed, name, occurred_at, subscription_id, api_version, payload, raw, identity_key,
                          erx_message_id, prescription_id, received_at)
      select id, '${FEED}', name, occurred_at, subscription_id, '2024-12-10', '{}'::jsonb,
             json_build_object('id', id, 'name', name, 'prescription_identity', json_build_object(
               'patient_first_name', 'Firstname', 'patient_last_name', 'Lastname', 'patient_state', 'CA',
               'patient_dob', '1980-01-01', 'erx_message_id', null, 'prescriber_npi', '1234567893',
               'written_date', '2025-01-01', 'drug_ndc', '00002015204'),
               'pharmacy_npi', '1689411712', 'occurred_at', occurred_at, 'api_version', '2024-12-10',
               'subscription_id', subscription_id, 'payload', '{}'::json),
             identity_key, erx_message_id, prescription_id, now()
      from matched
      on conflict (feed, id) do nothing
      returning id, name, occurred_at, prescription_id
    ), best as (
      select distinct on (prescription_id) inserted.*, array_position(names, name) as status_rank
      from inserted where prescription_id is not null
      order by prescription_id, array_position(names, name) desc, occurred_at desc, id desc
    ), advanced as (
      update intake_sync.prescriptions p
         set status = best.name, status_rank = best.status_rank, status_occurred_at = best.occurred_at,
             status_event_id = best.id, updated_at = now()
        from best
       where p.id = best.prescription_id and best.status_rank > p.status_rank
      returning p.id
    )
    update intake_sync.feed_checkpoints
       set iterator = 'ceiling_' || (first_event + ${PAGE_SIZE}), version = version + 1, updated_at = now(),
           pages_applied = pages_applied + 1, events_applied = events_applied + (select count(*) from inserted)
     where feed = '${FEED}';
    checkpoint_version := checkpoint_version + 1;
    commit;
    p_pages := p_pages + 1;
  end loop;
end $$`;

/**
 * Runs the ceiling for `seconds` in a scratch database holding `prescriptions` local prescriptions
 * (the same count the drain registers, so index depth matches).
 */
export async function measureCeiling(sql: postgres.Sql, prescriptions: number, seconds: number): Promise<CeilingResult> {
  await insertFillerPrescriptions(sql, 'ceiling', 1, prescriptions, FILLER_FEED);
  await sql`insert into intake_sync.feed_checkpoints (feed) values (${FEED})`;
  await sql.unsafe(PROCEDURE);
  // as before each drain: the bulk load's dirty pages are flushed first, not during the measurement
  await sql`checkpoint`;
  const started = performance.now();
  // CALL must run outside a transaction block for the procedure's COMMITs: simple protocol, one statement
  const [row] = await sql.unsafe<Array<{ p_pages: number }>>(`call bench_ceiling(${seconds}, ${prescriptions})`).simple();
  const elapsed = (performance.now() - started) / 1000;
  const pages = row?.p_pages ?? 0;
  return {
    pages,
    events: pages * PAGE_SIZE,
    seconds: elapsed,
    events_per_s: (pages * PAGE_SIZE) / elapsed,
    pages_per_s: pages / elapsed,
  };
}
