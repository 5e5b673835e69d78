import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { recordAudit } from '../../store-api/audit/audit-entries.js';
import { queryRows, type Db } from '../../db/connection.js';
import { namesOf } from '../../db/store-names.js';
import type { PrescriptionIdentityInput } from '../../intake/identity.js';
import { DEFAULT_FEED } from '../../db/feed-name.js';
import { identityKey, normaliseErx } from './identity-key.js';
import { matchLockExclusive } from './match-lock.js';
import { MATCH_LOCK_BUDGET_MS, matchLockBudgetSql, nextBatchSize, runWithinBudget } from './lock-budget.js';
import { addRematch, rematchKeys, type RematchResult } from './rematch.js';
import { registrationUpsertSql } from './registration-upsert-sql.js';

export interface LocalPrescriptionInput {
  external_id: string;
  prescription_identity: PrescriptionIdentityInput;
  subscription_id?: string | null;
  /** ISO timestamp; only recordSentPrescription knows it */
  cancellation_requested_at?: string | null;
}

export interface LocalPrescription {
  feed: string;
  external_id: string;
  /** null before any event applied */
  status: string | null;
  status_occurred_at: string | null;
  /** distinct events applied to it */
  events: number;
  cancellation_requested_at: string | null;
  subscription_id: string | null;
}

/**
 * Rows per registration transaction. Each batch holds the exclusive match lock while it upserts its
 * rows and rematches the held events of their identities, so page applies wait at most one batch:
 * 500 rows hold it for about 0.1-0.2 s beside 100,000 held events (docs/performance.md); 2,000 held
 * it for up to 2 s on a loaded machine (the held-event lookup turns into scans).
 */
export const REGISTER_BATCH_SIZE = 500;

/**
 * A registration this large refreshes the table's planner statistics at once. Without them
 * (autovacuum off, or not there yet) the page statement's match can be planned for a table
 * of a few rows: measured here, 250,000 fresh rows took pages from 30 ms to over a second.
 */
export const ANALYZE_AFTER_INSERTED = 1_000;

/** One input row of registrationUpsertSql, as the JSON object its jsonb_to_recordset reads. */
function rowJson(row: LocalPrescriptionInput): string {
  const id = row.prescription_identity;
  return JSON.stringify({
    external_id: row.external_id,
    patient_first_name: id.patient_first_name,
    patient_last_name: id.patient_last_name,
    patient_state: id.patient_state,
    patient_dob: id.patient_dob,
    prescriber_npi: id.prescriber_npi,
    written_date: id.written_date,
    drug_ndc: id.drug_ndc,
    erx_message_id: normaliseErx(id.erx_message_id),
    identity_key: identityKey(id),
    subscription_id: row.subscription_id ?? null,
    cancellation_requested_at: row.cancellation_requested_at ?? null,
  });
}

/** Which feed (operator account) local prescriptions belong to; DEFAULT_FEED when omitted. */
export interface FeedScope {
  feed?: string | undefined;
}

/** What a registration did: rows new and updated, and the rematch of the held events their identities concern. */
export interface RegisterResult {
  inserted: number;
  updated: number;
  rematch: RematchResult;
}

/** One committed registration batch (progress, and the lock hold time the benchmark reports). */
export interface RegisterBatch extends RegisterResult {
  rows: number;
  /** waiting for the exclusive match lock (the page apply in flight finishes first) */
  lockWaitMs: number;
  /** from holding the lock to commit: how long page applies waited on this batch */
  lockHeldMs: number;
}

/**
 * Records each batch in the audit trail, in the batch's transaction (`prescription.import`,
 * `prescription.send`): the counts, and the external_id when the batch holds one prescription.
 * `onBehalfOf`: who beyond the database role (default the OS user@host).
 */
export interface RegistrationAudit {
  action: string;
  onBehalfOf?: string;
}

export interface RegisterOptions extends FeedScope {
  batchSize?: number;
  onBatch?: (batch: RegisterBatch) => void;
  audit?: RegistrationAudit | undefined;
  /** statement budget of each batch while it holds the match lock (MATCH_LOCK_BUDGET_MS) */
  budgetMs?: number;
  /** a batch of `rows` exceeded its budget and is retried in two halves */
  onHalve?: (rows: number) => void;
}

async function upsertBatch(
  db: Db,
  feed: string,
  batch: readonly LocalPrescriptionInput[],
  audit: RegistrationAudit | undefined,
  budgetMs: number,
): Promise<RegisterBatch> {
  const n = namesOf(db);
  const started = performance.now();
  let locked = started;
  const result = await db.transaction(async (tx) => {
    // exclusive against page applies: a page must not match against a half-registered set (see match-lock.ts)
    await tx.execute(sql`select 1 from (select ${matchLockExclusive(n, feed)}) as match_lock`);
    locked = performance.now();
    await tx.execute(matchLockBudgetSql(budgetMs));
    const [row] = await queryRows<{ inserted: number; updated: number; keys: string; erx_ids: string }>(
      tx,
      registrationUpsertSql(n, feed, `[${batch.map(rowJson).join(',')}]`),
    );
    // the held events these identities concern, and only those: a rematch of the whole quarantine here
    // held the lock for minutes with 100,000 held events (issue 19)
    const rematched = await rematchKeys(
      tx,
      n,
      JSON.parse(row?.keys ?? '[]') as string[],
      JSON.parse(row?.erx_ids ?? '[]') as string[],
      feed,
    );
    const counts = { inserted: row?.inserted ?? 0, updated: row?.updated ?? 0 };
    if (audit) {
      const subject = batch.length === 1 ? (batch[0]?.external_id ?? null) : null;
      const detail = { ...counts, rows: batch.length, rematched: rematched.matched };
      await recordAudit(tx, n, { action: audit.action, feed, subject, detail }, audit.onBehalfOf);
    }
    return { ...counts, rematch: rematched };
  });
  return { ...result, rows: batch.length, lockWaitMs: locked - started, lockHeldMs: performance.now() - locked };
}

/**
 * Registers (upserts by feed and external_id) the vendor's prescriptions in batches, each batch one
 * transaction that also rematches the feed's open unmatched/ambiguous findings its identities (and the
 * identities it replaced) concern. A failing batch leaves the batches before it committed.
 */
export async function registerLocalPrescriptions(
  db: Db,
  rows: readonly LocalPrescriptionInput[],
  options: RegisterOptions = {},
): Promise<RegisterResult> {
  const feed = options.feed ?? DEFAULT_FEED;
  const maxSize = options.batchSize ?? REGISTER_BATCH_SIZE;
  const budgetMs = options.budgetMs ?? MATCH_LOCK_BUDGET_MS;
  // a repeated external_id in one statement would make ON CONFLICT touch a row twice: the last one wins
  const unique = [...new Map(rows.map((r) => [r.external_id, r])).values()];
  const total: RegisterResult = { inserted: 0, updated: 0, rematch: { examined: 0, matched: 0, stillUnmatched: 0, stillAmbiguous: 0 } };
  // each batch under the match-lock budget: one that exceeds it rolls back and is retried in halves
  // (lock-budget.ts), and the batches after it start at the size that committed
  for (let start = 0, size = maxSize; start < unique.length; ) {
    const slice = unique.slice(start, start + size);
    const smallest = await runWithinBudget(
      slice,
      async (part) => {
        const batch = await upsertBatch(db, feed, part, options.audit, budgetMs);
        total.inserted += batch.inserted;
        total.updated += batch.updated;
        addRematch(total.rematch, batch.rematch);
        options.onBatch?.(batch);
      },
      { budgetMs, onHalve: options.onHalve, describe: (row) => `the registration of external_id ${row.external_id}` },
    );
    start += slice.length;
    size = nextBatchSize(maxSize, size, smallest);
  }
  if (total.inserted >= ANALYZE_AFTER_INSERTED) await db.execute(sql`analyze ${namesOf(db).prescriptions}`);
  return total;
}

const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string | Date).toISOString());

/**
 * Local prescriptions with their current status, ordered by external_id: the SQL API's view
 * prescription_status (drizzle/0002_api_register.sql), so the CLI and applications read one definition.
 */
export async function listLocalPrescriptions(
  db: Db,
  options: { status?: string | undefined } & FeedScope = {},
): Promise<LocalPrescription[]> {
  const rows = await queryRows<Record<string, unknown>>(
    db,
    sql`select feed, external_id, status, status_occurred_at, cancellation_requested_at, subscription_id, events
        from ${namesOf(db).qualified('prescription_status')}
        where feed = ${options.feed ?? DEFAULT_FEED}::text
          and (${options.status ?? null}::text is null or status = ${options.status ?? null}::text)
        order by external_id`,
  );
  return rows.map((r) => ({
    feed: r.feed as string,
    external_id: r.external_id as string,
    status: (r.status as string | null) ?? null,
    status_occurred_at: iso(r.status_occurred_at),
    events: Number(r.events),
    cancellation_requested_at: iso(r.cancellation_requested_at),
    subscription_id: (r.subscription_id as string | null) ?? null,
  }));
}
