import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import { DEFAULT_FEED } from '../../db/feed-name.js';
import { namesOf } from '../../db/store-names.js';
import { identityKey, normaliseErx } from '../../sync/matching/identity-key.js';
import type { FeedScope, LocalPrescriptionInput } from '../../sync/matching/local-prescriptions.js';

/** What registering these rows would do, counted read-only (`prescriptions import --dry-run`). */
export interface RegistrationPreview {
  /** external_ids not registered yet in the feed */
  new: number;
  /** external_ids already registered (their identity would be replaced) */
  updated: number;
  /** open unmatched/ambiguous findings whose event has one of these identities or erx ids: what the import rematches */
  heldConcerned: number;
  /** rows that have no recorded subscription (what --subscribe would create at the operator) */
  withoutSubscription: number;
}

/** Counts what registerLocalPrescriptions(rows) would do, without the match lock and without writing. */
export async function previewRegistration(
  db: Db,
  rows: readonly LocalPrescriptionInput[],
  scope: FeedScope = {},
): Promise<RegistrationPreview> {
  const n = namesOf(db);
  const feed = scope.feed ?? DEFAULT_FEED;
  const input = JSON.stringify(
    rows.map((r) => ({
      external_id: r.external_id,
      identity_key: identityKey(r.prescription_identity),
      erx_message_id: normaliseErx(r.prescription_identity.erx_message_id),
    })),
  );
  const [row] = await queryRows<{ new: number; updated: number; held: number; without_subscription: number }>(
    db,
    sql`with input as materialized (
          select distinct on (external_id) * from jsonb_to_recordset(${input}::jsonb) as r(external_id text, identity_key text, erx_message_id text)
        ),
        known as materialized (
          select i.external_id, p.subscription_id from input i
          join ${n.prescriptions} p on p.feed = ${feed}::text and p.external_id = i.external_id
        )
        select (select count(*) from input)::int - (select count(*) from known)::int as new,
          (select count(*) from known)::int as updated,
          (select count(*) from known where subscription_id is null)::int
            + (select count(*) from input)::int - (select count(*) from known)::int as without_subscription,
          (select count(*) from ${n.events} e
            join ${n.quarantine} q on q.feed = e.feed and q.quarantine_key = e.id
            where e.prescription_id is null and e.feed = ${feed}::text
              and (e.identity_key in (select identity_key from input)
                or e.erx_message_id in (select erx_message_id from input where erx_message_id is not null))
              and q.resolved_at is null and q.reason in ('unmatched', 'ambiguous'))::int as held`,
  );
  return {
    new: row?.new ?? 0,
    updated: row?.updated ?? 0,
    heldConcerned: row?.held ?? 0,
    withoutSubscription: row?.without_subscription ?? 0,
  };
}
