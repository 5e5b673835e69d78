import { registerFeeds } from '../../../src/db/feed-registry.js';
import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../../src/db/connection.js';
import type { PrescriptionIdentity } from '../../../src/intake/identity.js';

/** A valid (check-digit) prescriber NPI. */
export const PRESCRIBER_NPI = '1234567893';

export function identity(overrides: Partial<PrescriptionIdentity> = {}): PrescriptionIdentity {
  return {
    patient_first_name: 'Ada',
    patient_last_name: 'Lovelace',
    patient_state: 'NY',
    patient_dob: '1990-12-10',
    erx_message_id: null,
    prescriber_npi: PRESCRIBER_NPI,
    written_date: '2024-12-01',
    drug_ndc: '00002015204',
    ...overrides,
  };
}

/** A well-formed event as the operator would publish it. */
export function event(
  id: string,
  name: string,
  occurredAt: string,
  identityOverrides: Partial<PrescriptionIdentity> = {},
): Record<string, unknown> {
  return {
    id,
    name,
    prescription_identity: identity(identityOverrides),
    pharmacy_npi: '1689411712',
    occurred_at: occurredAt,
    api_version: '2024-12-10',
    subscription_id: 'sub-1',
    payload: {},
  };
}

/** Every row of the tables applyPage writes, for before/after comparisons. */
export async function snapshotStore(db: Db): Promise<Record<string, unknown[]>> {
  const tables = ['events', 'prescriptions', 'quarantine', 'feed_checkpoints', 'checkpoint_resets'];
  const result: Record<string, unknown[]> = {};
  for (const table of tables) {
    result[table] = await queryRows(db, sql`select * from ${sql.identifier('intake_sync')}.${sql.identifier(table)} order by 1`);
  }
  return result;
}

/** Empties the store between tests of one file (the database is per file), back to just after `migrate` (feed `default` registered). */
export async function truncateStore(db: Db): Promise<void> {
  await db.execute(
    sql`truncate intake_sync.events, intake_sync.prescriptions, intake_sync.quarantine, intake_sync.feed_checkpoints, intake_sync.checkpoint_resets, intake_sync.status_changes, intake_sync.change_commits, intake_sync.outbox, intake_sync.feed_sources, intake_sync.subscription_migrations restart identity cascade`,
  );
  await registerFeeds(db, ['default'], null);
}
