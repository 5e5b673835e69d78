import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import { recordAudit } from '../../store-api/audit/audit-entries.js';
import { namesOf } from '../../db/store-names.js';
import type { MigrationTarget } from './migration-target.js';
import { sourceLockExclusive } from '../../sync/version-migration/source-lock.js';
import { addLateJoiners, FINISHED_MIGRATION_STATES, isFinishedMigrationState } from '../../sync/version-migration/migration-progress.js';
import { countAwaitingSend, countMigrationStates, loadMigrationRows, selectPrescriptionsToMove } from './migration-rows.js';

import type { MigrateOptions, MigrationSummary } from './migration-options.js';
import { moveOne } from './subscription-move.js';

export type { MigrationState } from '../../sync/version-migration/migration-progress.js';

/**
 * Moves the feed's local prescriptions to the target version: when it starts, records the sources
 * (old draining, new current) and the set of prescriptions to move (a pending row each: the local ones
 * and the outbox sends in flight through the old URL) in one transaction; then, per row, creates the new subscription through the new base URL and cancels the
 * old one(s). Reruns work through those rows only. Resumable: see docs/version-migration.md.
 */
export async function migrateSubscriptions(options: MigrateOptions): Promise<MigrationSummary> {
  const { db, feed, target } = options;
  const summary: MigrationSummary = {
    feed,
    from: target.from.baseUrl,
    to: target.to.baseUrl,
    target_version: target.to.apiVersion,
    dry_run: options.dryRun,
    prescriptions: 0,
    already_done: 0,
    created: 0,
    adopted: 0,
    duplicate_possible: 0,
    cancelled: 0,
    already_gone: 0,
    awaiting_old_subscription: 0,
    awaiting_send: 0,
    released: 0,
    complete: false,
  };
  if (options.dryRun) return dryRun(options, summary);
  try {
    await moveAll(options, summary);
  } catch (error) {
    const failure = { phase: 'failed', ...counts(summary), error: error instanceof Error ? error.name : 'unknown' };
    await auditRun(db, options, failure).catch(() => {});
    throw error;
  }
  await auditRun(db, options, { phase: summary.complete ? 'complete' : 'incomplete', ...counts(summary) });
  return summary;
}

/** What an audit row of a run says: counts only. */
function counts(s: MigrationSummary): Record<string, number> {
  const { prescriptions, already_done, created, adopted, duplicate_possible, cancelled, already_gone, released } = s;
  return { prescriptions, already_done, created, adopted, duplicate_possible, cancelled, already_gone, released };
}

/** One `subscriptions.migrate` audit row (subject: the target version); `by` is who ran it. */
async function auditRun(db: Pick<Db, 'execute'>, options: MigrateOptions, detail: Record<string, unknown>): Promise<void> {
  const entry = { action: 'subscriptions.migrate', feed: options.feed, subject: options.target.to.apiVersion, detail };
  await recordAudit(db, namesOf(options.db), entry, options.by);
}

async function moveAll(options: MigrateOptions, summary: MigrationSummary): Promise<void> {
  const { db, feed, target } = options;
  if (target.kind === 'start') await recordStart(options);
  else await addLateJoiners(db, namesOf(db), feed, target.from.baseUrl, target.to.apiVersion);
  const rows = await loadMigrationRows(db, feed, target.to.apiVersion);
  summary.prescriptions = rows.length;
  summary.already_done = rows.filter((r) => isFinishedMigrationState(r.state)).length;
  let done = summary.already_done;
  for (const row of rows) {
    if (isFinishedMigrationState(row.state)) continue;
    const state = await moveOne(options, row, summary);
    done += 1;
    options.progress?.(done, rows.length, row.externalId, state);
  }
  summary.awaiting_old_subscription = (await countMigrationStates(db, feed, target.to.apiVersion)).awaiting_old_subscription ?? 0;
  summary.awaiting_send = await countAwaitingSend(db, feed, target.to.apiVersion);
  summary.complete = await completeIfDone(db, feed, target);
}

/** The plan: the set a start would fix, or what a rerun has left. Writes and sends nothing. */
async function dryRun(options: MigrateOptions, summary: MigrationSummary): Promise<MigrationSummary> {
  const { db, feed, target } = options;
  if (target.kind === 'start') {
    const set = await selectPrescriptionsToMove(db, namesOf(db), feed, target.to.apiVersion);
    return {
      ...summary,
      prescriptions: set.length,
      awaiting_old_subscription: set.filter((r) => r.oldSubscriptionIds.length === 0).length,
      external_ids: set.map((r) => r.externalId),
    };
  }
  const rows = await loadMigrationRows(db, feed, target.to.apiVersion);
  return {
    ...summary,
    prescriptions: rows.length,
    already_done: rows.filter((r) => isFinishedMigrationState(r.state)).length,
    awaiting_old_subscription: rows.filter((r) => r.state === 'awaiting_old_subscription').length,
    external_ids: rows.filter((r) => !isFinishedMigrationState(r.state)).map((r) => r.externalId),
  };
}

/**
 * The sources and the set of prescriptions to move (a pending progress row each), in one transaction,
 * before any request. The set is fixed here: a prescription sent through the new source afterwards
 * already has its subscription there, and a rerun must not give it a second one.
 */
async function recordStart(options: MigrateOptions): Promise<void> {
  const { db, feed, target } = options;
  const n = namesOf(db);
  let count = 0;
  await db.transaction(async (tx) => {
    // first: an outbox claim committed before this one sent through the old URL and is seen below; a later one reads the new source
    await tx.execute(sourceLockExclusive(n, feed));
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
    await tx.execute(
      sql`update ${n.feedCheckpoints} set iterator = null, version = version + 1, updated_at = now() where feed = ${feed}::text`,
    );
    await tx.execute(sql`insert into ${n.checkpointResets} (feed, from_iterator, to_iterator, reset_by)
      values (${feed}::text, ${checkpoint?.iterator ?? null}::text, null, ${`subscriptions migrate to ${target.to.apiVersion} by ${options.by}`}::text)`);
    // rows of an earlier migration to the same version belong to that one, not to this set
    await tx.execute(
      sql`delete from ${n.subscriptionMigrations} where feed = ${feed}::text and target_version = ${target.to.apiVersion}::text`,
    );
    const set = await selectPrescriptionsToMove(tx, n, feed, target.to.apiVersion);
    count = set.length;
    if (set.length > 0) {
      const rows = set.map((r) => ({ external_id: r.externalId, old: r.oldSubscriptionIds }));
      await tx.execute(sql`insert into ${n.subscriptionMigrations} (feed, external_id, target_version, old_subscription_ids)
        select ${feed}::text, r.external_id, ${target.to.apiVersion}::text, r.old
        from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(external_id text, old jsonb)`);
    }
    // and every send through the old URL still in flight: its automatic subscription is at the old version
    await addLateJoiners(tx, n, feed, target.from.baseUrl, target.to.apiVersion);
    await auditRun(tx, options, { phase: 'started', from_version: target.from.apiVersion, prescriptions: count });
  });
  options.log?.info(
    { feed, from: target.from.baseUrl, to: target.to.baseUrl, prescriptions: count },
    'subscriptions migrate: sources and progress recorded',
  );
}

/** Marks the draining source's migration complete once every progress row of the target is done. */
async function completeIfDone(db: Db, feed: string, target: MigrationTarget): Promise<boolean> {
  const n = namesOf(db);
  const rows = await queryRows<{ base_url: string }>(
    db,
    sql`update ${n.feedSources} set migration_completed_at = coalesce(migration_completed_at, now()), updated_at = now()
        where feed = ${feed}::text and base_url = ${target.from.baseUrl}::text and state = 'draining'
          and not exists (select 1 from ${n.subscriptionMigrations} m
            where m.feed = ${feed}::text and m.target_version = ${target.to.apiVersion}::text
              and m.state <> all (${`{${FINISHED_MIGRATION_STATES.join(',')}}`}::text[]))
        returning base_url`,
  );
  return rows.length === 1;
}
