import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import { jsonColumn } from '../../db/json-column.js';
import { namesOf, type StoreNames } from '../../db/store-names.js';
import type { PrescriptionIdentity } from '../../intake/identity.js';
import { identityFromRow } from '../../sync/matching/identity-row.js';
import type { MigrationState } from '../../sync/version-migration/migration-progress.js';

// What `subscriptions migrate` (and status's migration counts) read of a migration's progress rows:
// the set fixed at its start, its rows with their identities, the old subscriptions found since, the
// counts by state. The worker reads none of it: it reads the sources and the late joiners
// (src/sync/version-migration/migration-progress.ts).

/** One prescription of the set fixed when the migration started, with its progress. */
export interface MigrationRow {
  prescriptionId: number;
  externalId: string;
  identity: PrescriptionIdentity;
  /** recorded when the migration started (empty: not known then) */
  oldSubscriptionIds: string[];
  state: MigrationState;
  newSubscriptionId: string | null;
}

/**
 * The feed's prescriptions to move when a migration starts: every local one, with the old
 * subscriptions known for it (the recorded one and those its events came under, except any already
 * publishing at the target version). Read inside the transaction that records the sources.
 */
export async function selectPrescriptionsToMove(
  db: Pick<Db, 'execute'>,
  n: StoreNames,
  feed: string,
  version: string,
): Promise<Array<{ externalId: string; oldSubscriptionIds: string[] }>> {
  const rows = await queryRows<{ external_id: string; old_ids: unknown; at_target: boolean }>(
    db,
    sql`select p.external_id,
          array_to_json(array_remove(array(
            select s from (select p.subscription_id as s union select e.subscription_id from ${n.events} e
              where e.feed = p.feed and e.prescription_id = p.id and e.api_version <> ${version}::text) known
            where not exists (select 1 from ${n.events} t where t.feed = p.feed and t.subscription_id = known.s and t.api_version = ${version}::text)
          ), null))::jsonb as old_ids,
          exists (select 1 from ${n.events} t where t.feed = p.feed and t.prescription_id = p.id and t.api_version = ${version}::text) as at_target
        from ${n.prescriptions} p
        -- one that ended and whose identity RETAIN_TERMINAL_IDENTITIES removed has nothing more to receive
        where p.feed = ${feed}::text and p.identity_key is not null
        order by p.external_id`,
  );
  return (
    rows
      .map((r) => ({
        externalId: r.external_id,
        oldSubscriptionIds: jsonColumn<string[] | null>(r.old_ids) ?? [],
        atTarget: r.at_target === true,
      }))
      // nothing known and already publishing at the target: it is there already
      .filter((r) => !(r.oldSubscriptionIds.length === 0 && r.atTarget))
      .map(({ externalId, oldSubscriptionIds }) => ({ externalId, oldSubscriptionIds }))
  );
}

/** The progress rows of the migration to `version`, with each prescription's identity: the set fixed at its start. */
export async function loadMigrationRows(db: Db, feed: string, version: string): Promise<MigrationRow[]> {
  const n = namesOf(db);
  const rows = await queryRows<Record<string, unknown>>(
    db,
    sql`select p.id, m.external_id, p.patient_first_name, p.patient_last_name, p.patient_state, p.patient_dob,
          p.prescriber_npi, p.written_date, p.drug_ndc, p.erx_message_id, m.state, m.new_subscription_id, m.old_subscription_ids
        from ${n.subscriptionMigrations} m
        join ${n.prescriptions} p on p.feed = m.feed and p.external_id = m.external_id
        where m.feed = ${feed}::text and m.target_version = ${version}::text
        order by m.external_id`,
  );
  return rows.map((r) => ({
    prescriptionId: Number(r.id),
    externalId: r.external_id as string,
    identity: identityFromRow(r),
    oldSubscriptionIds: jsonColumn<string[] | null>(r.old_subscription_ids) ?? [],
    state: r.state as MigrationState,
    newSubscriptionId: (r.new_subscription_id as string | null) ?? null,
  }));
}

/**
 * Old subscriptions discovered since the start: stored events of the prescription under the old
 * version whose subscription is not the new one (the automatic subscription of a prescription sent
 * through POST /prescriptions, whose id the first event reveals).
 */
export async function discoverOldSubscriptions(
  db: Db,
  feed: string,
  prescriptionId: number,
  oldVersion: string,
  newSubscriptionId: string,
): Promise<string[]> {
  const rows = await queryRows<{ subscription_id: string }>(
    db,
    sql`select distinct e.subscription_id from ${namesOf(db).events} e
        where e.feed = ${feed}::text and e.prescription_id = ${prescriptionId}::bigint and e.api_version = ${oldVersion}::text
          and e.subscription_id <> ${newSubscriptionId}::text
        order by e.subscription_id`,
  );
  return rows.map((r) => r.subscription_id);
}

/** How many rows of the migration to `version` are in each state. */
export async function countMigrationStates(db: Db, feed: string, version: string): Promise<Partial<Record<MigrationState, number>>> {
  const rows = await queryRows<{ state: MigrationState; count: unknown }>(
    db,
    sql`select state, count(*) as count from ${namesOf(db).subscriptionMigrations}
        where feed = ${feed}::text and target_version = ${version}::text group by state`,
  );
  return Object.fromEntries(rows.map((r) => [r.state, Number(r.count)]));
}

/** Late joiners not local yet: their send through the old URL is still in flight (or being retried). */
export async function countAwaitingSend(db: Db, feed: string, version: string): Promise<number> {
  const n = namesOf(db);
  const [row] = await queryRows<{ count: unknown }>(
    db,
    sql`select count(*) as count from ${n.subscriptionMigrations} m
        where m.feed = ${feed}::text and m.target_version = ${version}::text and m.state = 'pending'
          and not exists (select 1 from ${n.prescriptions} p where p.feed = m.feed and p.external_id = m.external_id)`,
  );
  return Number(row?.count ?? 0);
}
