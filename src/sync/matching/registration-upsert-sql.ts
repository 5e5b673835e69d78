import { sql, type SQL } from 'drizzle-orm';
import type { StoreNames } from '../../db/store-names.js';

/**
 * One registration batch's upsert (by feed and external_id) of `rowsJson`, a JSON array of rows with
 * unique external_ids (local-prescriptions.ts builds it): how many rows were new and updated, and
 * the identity keys and eRx ids the batch concerns (its own and those it replaced), as JSON text.
 *
 * The old identities are read driven from the batch's own list (issue 26): each external_id one
 * lookup of the unique index (feed, external_id), kept a subquery of its own (LATERAL, OFFSET 0) so
 * no join strategy can replace the lookups. Joined the plain way, a table without statistics was
 * planned as a walk of every prescription of the feed per batch, under the match lock.
 */
export const registrationUpsertSql = (n: StoreNames, feed: string, rowsJson: string): SQL =>
  sql`with input as (
    select * from jsonb_to_recordset(${rowsJson}::jsonb) as r(external_id text, patient_first_name text,
      patient_last_name text, patient_state text, patient_dob text, prescriber_npi text, written_date text, drug_ndc text,
      erx_message_id text, identity_key text, subscription_id text, cancellation_requested_at timestamptz)
  ),
  -- an update's old identity: held events it made ambiguous may now match another prescription
  previous as (
    select p.identity_key, p.erx_message_id from input i cross join lateral (
      select p.identity_key, p.erx_message_id from ${n.prescriptions} p
      where p.feed = ${feed}::text and p.external_id = i.external_id
      offset 0
    ) p
  ),
  upserted as (
    insert into ${n.prescriptions} as p (feed, external_id, patient_first_name, patient_last_name, patient_state, patient_dob,
      prescriber_npi, written_date, drug_ndc, erx_message_id, identity_key, subscription_id, cancellation_requested_at)
    select ${feed}::text, external_id, patient_first_name, patient_last_name, patient_state, patient_dob,
      prescriber_npi, written_date, drug_ndc, erx_message_id, identity_key, subscription_id, cancellation_requested_at
    from input
    on conflict (feed, external_id) do update set
      patient_first_name = excluded.patient_first_name, patient_last_name = excluded.patient_last_name,
      patient_state = excluded.patient_state, patient_dob = excluded.patient_dob,
      prescriber_npi = excluded.prescriber_npi, written_date = excluded.written_date, drug_ndc = excluded.drug_ndc,
      erx_message_id = excluded.erx_message_id, identity_key = excluded.identity_key,
      -- an import without subscriptions must not forget the ones already created
      subscription_id = coalesce(excluded.subscription_id, p.subscription_id),
      cancellation_requested_at = coalesce(excluded.cancellation_requested_at, p.cancellation_requested_at),
      updated_at = now()
    returning (xmax = 0) as inserted
  )
  select (select count(*) filter (where inserted) from upserted)::int as inserted,
    (select count(*) filter (where not inserted) from upserted)::int as updated,
    -- as json text: the driver hands text[] back as its literal
    (select coalesce(json_agg(distinct k), '[]')::text
      from (select identity_key from input union all select identity_key from previous) as t(k)) as keys,
    (select coalesce(json_agg(distinct x), '[]')::text
      from (select erx_message_id from input union all select erx_message_id from previous) as t(x) where x is not null) as erx_ids`;
