import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../db/connection.js';
import { namesOf } from '../db/store-names.js';
import type { IntakeClient } from '../intake/client.js';
import { NotFoundError } from '../intake/errors/not-found-error.js';
import type { PrescriptionIdentity } from '../intake/identity.js';
import { mayHaveBeenProcessed } from '../intake/retry-policy.js';
import type { Logger } from '../log.js';
import type { MigrationTarget } from './migration-target.js';

/** Per-prescription states, each committed before the request it announces (see the README). */
export type MigrationState = 'pending' | 'creating' | 'created' | 'done';

interface Candidate {
  prescriptionId: number;
  externalId: string;
  identity: PrescriptionIdentity;
  /** recorded in the progress row when there is one; else derived from the prescription and its events */
  oldSubscriptionIds: string[];
  state: MigrationState | null;
  newSubscriptionId: string | null;
}

export interface MigrationSummary {
  feed: string;
  from: string;
  to: string;
  target_version: string;
  dry_run: boolean;
  /** prescriptions with a known subscription to move (done ones included) */
  prescriptions: number;
  already_done: number;
  created: number;
  /** a new subscription found among stored events after an unknown outcome, instead of sending again */
  adopted: number;
  /** sent again after an unknown outcome with nothing to adopt: the operator may hold a second new subscription */
  duplicate_possible: number;
  cancelled: number;
  /** old subscriptions the operator no longer knew (404) */
  already_gone: number;
  /** dry run: the external_ids that would be moved (identifiers only, never patient fields) */
  external_ids?: string[];
  /** every prescription done: the old source retires once the worker has read it to its end */
  complete: boolean;
}

export interface MigrateOptions {
  db: Db;
  feed: string;
  target: MigrationTarget;
  /** the new version's client: creates the subscriptions */
  newClient: Pick<IntakeClient, 'createSubscription'>;
  /** the old version's client: cancels the old subscriptions */
  oldClient: Pick<IntakeClient, 'cancelSubscription'>;
  dryRun: boolean;
  /** who runs it, for the checkpoint audit trail */
  by: string;
  log?: Logger;
  /** one line per prescription done (identifiers only) */
  progress?(done: number, total: number, externalId: string): void;
}

const json = <T>(value: unknown): T => (typeof value === 'string' ? (JSON.parse(value) as T) : (value as T));

/**
 * Moves every local prescription of the feed with a known subscription to the target version:
 * records the sources (old draining, new current) once, then per prescription creates the new
 * subscription through the new base URL and cancels the old one(s). Resumable: see the README,
 * "API version migration".
 */
export async function migrateSubscriptions(options: MigrateOptions): Promise<MigrationSummary> {
  const { db, feed, target } = options;
  const candidates = await loadCandidates(db, feed, target.to.apiVersion);
  const summary: MigrationSummary = {
    feed,
    from: target.from.baseUrl,
    to: target.to.baseUrl,
    target_version: target.to.apiVersion,
    dry_run: options.dryRun,
    prescriptions: candidates.length,
    already_done: candidates.filter((c) => c.state === 'done').length,
    created: 0,
    adopted: 0,
    duplicate_possible: 0,
    cancelled: 0,
    already_gone: 0,
    complete: false,
  };
  if (options.dryRun) return { ...summary, external_ids: candidates.filter((c) => c.state !== 'done').map((c) => c.externalId) };

  await recordStart(options, candidates);
  let done = summary.already_done;
  for (const candidate of candidates) {
    if (candidate.state === 'done') continue;
    await moveOne(options, candidate, summary);
    done += 1;
    options.progress?.(done, candidates.length, candidate.externalId);
  }
  summary.complete = await completeIfDone(db, feed, target);
  return summary;
}

/** The sources (once) and a pending progress row per candidate, in one transaction, before any request. */
async function recordStart(options: MigrateOptions, candidates: readonly Candidate[]): Promise<void> {
  const { db, feed, target } = options;
  const n = namesOf(db);
  await db.transaction(async (tx) => {
    if (target.kind === 'start') {
      await tx.execute(sql`insert into ${n.feedCheckpoints} (feed) values (${feed}::text) on conflict (feed) do nothing`);
      const [checkpoint] = await queryRows<{ iterator: string | null }>(
        tx,
        sql`select iterator from ${n.feedCheckpoints} where feed = ${feed}::text for update`,
      );
      // the old source keeps the position read so far; the feed's checkpoint becomes the new source's, from its start
      await tx.execute(sql`insert into ${n.feedSources} as s (feed, base_url, api_version, state, iterator, draining_since)
        values (${feed}::text, ${target.from.baseUrl}::text, ${target.from.apiVersion}::text, 'draining', ${checkpoint?.iterator ?? null}::text, now())
        on conflict (feed, base_url) do update set state = 'draining', iterator = excluded.iterator, version = s.version + 1,
          draining_since = now(), retired_at = null, migration_completed_at = null, updated_at = now()`);
      await tx.execute(sql`insert into ${n.feedSources} (feed, base_url, api_version, state)
        values (${feed}::text, ${target.to.baseUrl}::text, ${target.to.apiVersion}::text, 'current')
        on conflict (feed, base_url) do update set state = 'current', api_version = excluded.api_version, iterator = null,
          draining_since = null, retired_at = null, migration_completed_at = null, updated_at = now()`);
      await tx.execute(sql`update ${n.feedCheckpoints} set iterator = null, version = version + 1, updated_at = now() where feed = ${feed}::text`);
      await tx.execute(sql`insert into ${n.checkpointResets} (feed, from_iterator, to_iterator, reset_by)
        values (${feed}::text, ${checkpoint?.iterator ?? null}::text, null, ${`subscriptions migrate to ${target.to.apiVersion} by ${options.by}`}::text)`);
    }
    const rows = candidates
      .filter((c) => c.state === null)
      .map((c) => ({ external_id: c.externalId, old: c.oldSubscriptionIds }));
    if (rows.length > 0) {
      await tx.execute(sql`insert into ${n.subscriptionMigrations} (feed, external_id, target_version, old_subscription_ids)
        select ${feed}::text, r.external_id, ${target.to.apiVersion}::text, r.old
        from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(external_id text, old jsonb)
        on conflict do nothing`);
    }
  });
  options.log?.info({ feed, from: target.from.baseUrl, to: target.to.baseUrl, prescriptions: candidates.length }, 'subscriptions migrate: sources and progress recorded');
}

async function setState(db: Db, feed: string, externalId: string, targetVersion: string, fields: { state: MigrationState; error?: string | null; attempt?: boolean }): Promise<void> {
  await db.execute(sql`update ${namesOf(db).subscriptionMigrations}
    set state = ${fields.state}::text, last_error = ${fields.error ?? null}::text, updated_at = now(),
      attempts = attempts + ${fields.attempt ? 1 : 0}::int
    where feed = ${feed}::text and external_id = ${externalId}::text and target_version = ${targetVersion}::text`);
}

async function moveOne(options: MigrateOptions, candidate: Candidate, summary: MigrationSummary): Promise<void> {
  const { db, feed, target, log } = options;
  const version = target.to.apiVersion;
  const n = namesOf(db);
  let newId = candidate.newSubscriptionId;
  if (candidate.state !== 'created' || newId === null) {
    let duplicatePossible = false;
    if (candidate.state === 'creating') {
      // a POST may have landed (crash or unknown outcome): adopt a subscription its events already show
      newId = await findAdoptable(db, feed, candidate, version);
      if (newId !== null) summary.adopted += 1;
      else duplicatePossible = true;
    }
    if (newId === null) {
      await setState(db, feed, candidate.externalId, version, { state: 'creating', attempt: true });
      try {
        ({ id: newId } = await options.newClient.createSubscription({ prescription_identity: candidate.identity, backfill_previous_events: false }));
      } catch (error) {
        const unknown = mayHaveBeenProcessed(error);
        // a sure failure leaves it pending; an unknown outcome stays 'creating' and is reconciled by the rerun
        await setState(db, feed, candidate.externalId, version, { state: unknown ? 'creating' : 'pending', error: error instanceof Error ? error.message : String(error) });
        throw new Error(
          `subscriptions migrate of feed ${feed}: creating the ${version} subscription of external_id ${candidate.externalId} failed` +
            `${unknown ? ' (it may have been created: the rerun looks for it before sending again)' : ''}; rerun the same command to continue ` +
            `(${error instanceof Error ? error.message : String(error)})`,
          { cause: error },
        );
      }
      summary.created += 1;
      if (duplicatePossible) summary.duplicate_possible += 1;
    }
    await db.transaction(async (tx) => {
      await tx.execute(sql`update ${n.subscriptionMigrations} set state = 'created', new_subscription_id = ${newId}::text, last_error = null,
          duplicate_possible = duplicate_possible or ${duplicatePossible}::boolean, updated_at = now()
        where feed = ${feed}::text and external_id = ${candidate.externalId}::text and target_version = ${version}::text`);
      await tx.execute(sql`update ${n.prescriptions} set subscription_id = ${newId}::text, updated_at = now()
        where feed = ${feed}::text and external_id = ${candidate.externalId}::text`);
    });
    log?.info({ external_id: candidate.externalId, subscription_id: newId, api_version: version }, 'subscriptions migrate: new subscription recorded');
  }
  for (const old of candidate.oldSubscriptionIds) {
    if (old === newId) continue;
    try {
      await options.oldClient.cancelSubscription(old);
      summary.cancelled += 1;
    } catch (error) {
      if (!(error instanceof NotFoundError)) {
        await setState(db, feed, candidate.externalId, version, { state: 'created', error: error instanceof Error ? error.message : String(error) });
        throw new Error(`subscriptions migrate of feed ${feed}: cancelling ${old} of external_id ${candidate.externalId} failed; rerun the same command to continue`, { cause: error });
      }
      summary.already_gone += 1;
    }
  }
  await setState(db, feed, candidate.externalId, version, { state: 'done' });
}

/** A subscription at the target version that stored events of this prescription name and we never recorded. */
async function findAdoptable(db: Db, feed: string, candidate: Candidate, version: string): Promise<string | null> {
  const [row] = await queryRows<{ subscription_id: string }>(
    db,
    sql`select e.subscription_id from ${namesOf(db).events} e
        where e.feed = ${feed}::text and e.prescription_id = ${candidate.prescriptionId}::bigint and e.api_version = ${version}::text
          and e.subscription_id not in (select jsonb_array_elements_text(${JSON.stringify(candidate.oldSubscriptionIds)}::jsonb))
        order by e.received_at, e.id limit 1`,
  );
  return row?.subscription_id ?? null;
}

/** Marks the draining source's migration complete once every progress row of the target is done. */
async function completeIfDone(db: Db, feed: string, target: MigrationTarget): Promise<boolean> {
  const n = namesOf(db);
  const rows = await queryRows<{ base_url: string }>(
    db,
    sql`update ${n.feedSources} set migration_completed_at = coalesce(migration_completed_at, now()), updated_at = now()
        where feed = ${feed}::text and base_url = ${target.from.baseUrl}::text and state = 'draining'
          and not exists (select 1 from ${n.subscriptionMigrations} m
            where m.feed = ${feed}::text and m.target_version = ${target.to.apiVersion}::text and m.state <> 'done')
        returning base_url`,
  );
  return rows.length === 1;
}

/** The feed's prescriptions with a known subscription, and their progress toward `version`. */
async function loadCandidates(db: Db, feed: string, version: string): Promise<Candidate[]> {
  const n = namesOf(db);
  // old subscriptions: the recorded one and those its events came under, except any already publishing at the target version
  const rows = await queryRows<Record<string, unknown>>(
    db,
    sql`select p.id, p.external_id, p.patient_first_name, p.patient_last_name, p.patient_state, p.patient_dob,
          p.prescriber_npi, p.written_date, p.drug_ndc, p.erx_message_id, m.state, m.new_subscription_id,
          coalesce(m.old_subscription_ids, array_to_json(array_remove(array(
            select s from (select p.subscription_id as s union select e.subscription_id from ${n.events} e
              where e.feed = p.feed and e.prescription_id = p.id and e.api_version <> ${version}::text) known
            where not exists (select 1 from ${n.events} t where t.feed = p.feed and t.subscription_id = known.s and t.api_version = ${version}::text)
          ), null))::jsonb) as old_ids,
          exists (select 1 from ${n.events} t where t.feed = p.feed and t.prescription_id = p.id and t.api_version = ${version}::text) as at_target
        from ${n.prescriptions} p
        left join ${n.subscriptionMigrations} m on m.feed = p.feed and m.external_id = p.external_id and m.target_version = ${version}::text
        where p.feed = ${feed}::text
        order by p.external_id`,
  );
  const candidates: Candidate[] = [];
  for (const r of rows) {
    const old = json<string[] | null>(r.old_ids) ?? [];
    // nothing known and nothing at the target yet: its automatic subscription's id is not known (no event
    // came), so it gets a new one and the old one is left to the operator (README: what it cannot do)
    if (r.state === null && old.length === 0 && r.at_target === true) continue;
    candidates.push({
      prescriptionId: Number(r.id),
      externalId: r.external_id as string,
      identity: {
        patient_first_name: r.patient_first_name as string,
        patient_last_name: r.patient_last_name as string,
        patient_state: r.patient_state as string,
        patient_dob: r.patient_dob as string,
        prescriber_npi: r.prescriber_npi as string,
        written_date: r.written_date as string,
        drug_ndc: r.drug_ndc as string,
        erx_message_id: (r.erx_message_id as string | null) ?? null,
      },
      oldSubscriptionIds: old,
      state: (r.state as MigrationState | null) ?? null,
      newSubscriptionId: (r.new_subscription_id as string | null) ?? null,
    });
  }
  return candidates;
}
