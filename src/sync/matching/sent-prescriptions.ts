import { sql } from 'drizzle-orm';
import { recordAudit } from '../../store-api/audit/audit-entries.js';
import { queryRows, type Db } from '../../db/connection.js';
import { DEFAULT_FEED } from '../../db/feed-name.js';
import { namesOf, type StoreNames } from '../../db/store-names.js';
import type { PrescriptionRequest } from '../../intake/prescription.js';
import { registerLocalPrescriptions, type FeedScope, type RegistrationAudit } from './local-prescriptions.js';

// A prescription this vendor sent through the API, after the send: recorded so its events match it,
// its cancellation request mirrored, its subscription kept. Bulk registration is local-prescriptions.ts.

/**
 * Records a prescription sent through POST /prescriptions so its events match it: one row, so the
 * rematch that follows concerns only its own identity's held events.
 */
export async function recordSentPrescription(
  db: Db,
  request: PrescriptionRequest,
  response: { cancellation_requested_at: string | null },
  subscriptionId?: string,
  scope: FeedScope & { audit?: RegistrationAudit | undefined } = {},
): Promise<void> {
  await registerLocalPrescriptions(
    db,
    [
      {
        external_id: request.external_id,
        prescription_identity: {
          patient_first_name: request.patient.first_name,
          patient_last_name: request.patient.last_name,
          patient_state: request.patient.address.state,
          patient_dob: request.patient.dob,
          prescriber_npi: request.prescriber.npi,
          written_date: request.written_date,
          drug_ndc: request.medication.ndc,
        },
        subscription_id: subscriptionId ?? null,
        cancellation_requested_at: response.cancellation_requested_at,
      },
    ],
    scope,
  );
}

/**
 * Mirrors a cancellation request on the local row; false when there is no such row. With `audit`,
 * the change and its audit row (`prescription.cancel`) commit together.
 */
export async function markCancellationRequested(
  db: Db,
  externalId: string,
  at: string,
  scope: FeedScope & { audit?: RegistrationAudit | undefined } = {},
): Promise<boolean> {
  const n = namesOf(db);
  const feed = scope.feed ?? DEFAULT_FEED;
  const audit = scope.audit;
  if (!audit) return markOn(db, n, externalId, at, feed);
  return db.transaction(async (tx) => {
    const marked = await markOn(tx, n, externalId, at, feed);
    await recordAudit(tx, n, { action: audit.action, feed, subject: externalId, detail: { local_row: marked } }, audit.onBehalfOf);
    return marked;
  });
}

async function markOn(db: Pick<Db, 'execute'>, n: StoreNames, externalId: string, at: string, feed: string): Promise<boolean> {
  const rows = await queryRows(
    db,
    sql`update ${n.prescriptions} set cancellation_requested_at = coalesce(cancellation_requested_at, ${at}::timestamptz), updated_at = now()
        where feed = ${feed}::text and external_id = ${externalId}::text returning 1`,
  );
  return rows.length > 0;
}

/**
 * Sets the subscription created for an already registered prescription; `onlyIfNone`: unless one was
 * recorded meanwhile (an API version migration gives it its new-version subscription).
 */
export async function setSubscriptionId(
  db: Db,
  externalId: string,
  subscriptionId: string,
  scope: FeedScope & { onlyIfNone?: boolean } = {},
): Promise<void> {
  await db.execute(
    sql`update ${namesOf(db).prescriptions} set subscription_id = ${subscriptionId}::text, updated_at = now()
        where feed = ${scope.feed ?? DEFAULT_FEED}::text and external_id = ${externalId}::text
          and (not ${scope.onlyIfNone ?? false}::boolean or subscription_id is null)`,
  );
}

/** The subscription recorded for a local prescription (null: none yet, or no such prescription). */
export async function recordedSubscriptionId(db: Db, externalId: string, scope: FeedScope = {}): Promise<string | null> {
  const [row] = await queryRows<{ subscription_id: string | null }>(
    db,
    sql`select subscription_id from ${namesOf(db).prescriptions}
        where feed = ${scope.feed ?? DEFAULT_FEED}::text and external_id = ${externalId}::text`,
  );
  return row?.subscription_id ?? null;
}
