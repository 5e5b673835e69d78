import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import { namesOf } from '../../db/store-names.js';
import { NotFoundError } from '../../intake/errors/not-found-error.js';
import { mayHaveBeenProcessed } from '../../intake/retry-policy.js';
import type { MigrateOptions, MigrationSummary } from './migration-options.js';
import type { MigrationState } from '../../sync/version-migration/migration-progress.js';
import { discoverOldSubscriptions, type MigrationRow } from './migration-rows.js';

// One prescription's move to the target version: adopt or create its new subscription, cancel the
// old one(s), and record each state it passes, so a rerun resumes where this one stopped.

async function setState(
  db: Db,
  feed: string,
  externalId: string,
  targetVersion: string,
  fields: { state: MigrationState; error?: string | null; attempt?: boolean },
): Promise<void> {
  await db.execute(sql`update ${namesOf(db).subscriptionMigrations}
    set state = ${fields.state}::text, last_error = ${fields.error ?? null}::text, updated_at = now(),
      attempts = attempts + ${fields.attempt ? 1 : 0}::int
    where feed = ${feed}::text and external_id = ${externalId}::text and target_version = ${targetVersion}::text`);
}

/** Moves one prescription as far as it can go now; returns the state it ends in. */
export async function moveOne(options: MigrateOptions, candidate: MigrationRow, summary: MigrationSummary): Promise<MigrationState> {
  const { db, feed, target, log } = options;
  const version = target.to.apiVersion;
  const n = namesOf(db);
  let newId = candidate.newSubscriptionId;
  const hasNew = candidate.state === 'created' || candidate.state === 'awaiting_old_subscription';
  if (!hasNew || newId === null) {
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
        ({ id: newId } = await options.newClient.createSubscription({
          prescription_identity: candidate.identity,
          backfill_previous_events: false,
        }));
      } catch (error) {
        const unknown = mayHaveBeenProcessed(error);
        // a sure failure leaves it pending; an unknown outcome stays 'creating' and is reconciled by the rerun
        await setState(db, feed, candidate.externalId, version, {
          state: unknown ? 'creating' : 'pending',
          error: error instanceof Error ? error.message : String(error),
        });
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
    log?.info(
      { external_id: candidate.externalId, subscription_id: newId, api_version: version },
      'subscriptions migrate: new subscription recorded',
    );
  }
  let olds = candidate.oldSubscriptionIds.filter((old) => old !== newId);
  if (olds.length === 0) {
    // not known when the migration started: the old source's first event of it names the old one
    olds = await discoverOldSubscriptions(db, feed, candidate.prescriptionId, target.from.apiVersion, newId);
    if (olds.length === 0 && options.releaseAwaiting) {
      await setState(db, feed, candidate.externalId, version, { state: 'released' });
      summary.released += 1;
      log?.info(
        { external_id: candidate.externalId },
        'subscriptions migrate: released without an old subscription to cancel (--release-awaiting)',
      );
      return 'released';
    }
    if (olds.length === 0) {
      await setState(db, feed, candidate.externalId, version, { state: 'awaiting_old_subscription' });
      log?.info(
        { external_id: candidate.externalId },
        'subscriptions migrate: old subscription not known yet; a rerun cancels it once its first event arrived',
      );
      return 'awaiting_old_subscription';
    }
    await db.execute(sql`update ${n.subscriptionMigrations} set old_subscription_ids = ${JSON.stringify(olds)}::jsonb, updated_at = now()
      where feed = ${feed}::text and external_id = ${candidate.externalId}::text and target_version = ${version}::text`);
  }
  for (const old of olds) {
    try {
      await options.oldClient.cancelSubscription(old);
      summary.cancelled += 1;
    } catch (error) {
      if (!(error instanceof NotFoundError)) {
        await setState(db, feed, candidate.externalId, version, {
          state: 'created',
          error: error instanceof Error ? error.message : String(error),
        });
        throw new Error(
          `subscriptions migrate of feed ${feed}: cancelling ${old} of external_id ${candidate.externalId} failed; rerun the same command to continue`,
          { cause: error },
        );
      }
      summary.already_gone += 1;
    }
  }
  await setState(db, feed, candidate.externalId, version, { state: 'done' });
  return 'done';
}

/** A subscription at the target version that stored events of this prescription name and we never recorded. */
async function findAdoptable(db: Db, feed: string, candidate: MigrationRow, version: string): Promise<string | null> {
  const [row] = await queryRows<{ subscription_id: string }>(
    db,
    sql`select e.subscription_id from ${namesOf(db).events} e
        where e.feed = ${feed}::text and e.prescription_id = ${candidate.prescriptionId}::bigint and e.api_version = ${version}::text
          and e.subscription_id not in (select jsonb_array_elements_text(${JSON.stringify(candidate.oldSubscriptionIds)}::jsonb))
        order by e.received_at, e.id limit 1`,
  );
  return row?.subscription_id ?? null;
}
