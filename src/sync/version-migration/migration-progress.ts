import { sql } from 'drizzle-orm';
import type { Db } from '../../db/connection.js';
import type { StoreNames } from '../../db/store-names.js';

/**
 * Per-prescription states of `subscriptions migrate`, each committed before the request it announces.
 * `awaiting_old_subscription`: the new subscription exists, but the old one's id is not known yet (the
 * prescription was sent through POST /prescriptions and no event of it has come): the migration stays
 * incomplete, so the worker keeps reading the old source, whose first event of it names the old one.
 * `released`: finished by `--release-awaiting` while awaiting: its new subscription publishes its
 * events; an old one, if it ever existed, is left active at the operator (a prescription registered
 * from fax or eRx may never have had one, and then no event would ever name it).
 * `not_sent`: a late joiner (an outbox send through the old base URL, see addLateJoiners) whose every
 * send failed: the operator never created it, so there is nothing to move (kept, not deleted, for audit).
 */
export const MIGRATION_STATES = ['pending', 'creating', 'created', 'awaiting_old_subscription', 'released', 'not_sent', 'done'] as const;
/** States that need nothing more: the migration is complete when every row is in one. */
export const FINISHED_MIGRATION_STATES: readonly MigrationState[] = ['done', 'released', 'not_sent'];
/** The finished states as a SQL text[] literal. */
export const finishedStatesSql = (): string => `{${FINISHED_MIGRATION_STATES.join(',')}}`;
export const isFinishedMigrationState = (state: MigrationState): boolean => FINISHED_MIGRATION_STATES.includes(state);
export type MigrationState = (typeof MIGRATION_STATES)[number];

/**
 * Late joiners: every prescription an outbox send went through the old base URL for (claimed before the
 * start, possibly still in flight then; or retried through it since: a send keeps its first URL) gets a
 * pending progress row if it has none. Its prescription may not be local yet (the send in flight): such a
 * row is not worked on (loadMigrationRows joins the local prescription) but keeps the migration incomplete.
 * Then a row with no local prescription whose every send through the old URL failed ends `not_sent`.
 * Run by the start (under the exclusive source lock: every claim through the old URL has committed) and
 * by every rerun.
 */
export async function addLateJoiners(
  db: Pick<Db, 'execute'>,
  n: StoreNames,
  feed: string,
  oldBaseUrl: string,
  version: string,
): Promise<void> {
  await db.execute(sql`insert into ${n.subscriptionMigrations} (feed, external_id, target_version, old_subscription_ids)
    select distinct o.feed, o.external_id, ${version}::text, '[]'::jsonb from ${n.outbox} o
    where o.feed = ${feed}::text and o.kind = 'send' and o.sent_through = ${oldBaseUrl}::text
      -- a delivered one is local (recorded before it is settled): the set selected it already
      and o.state = 'pending'
    on conflict do nothing`);
  await db.execute(sql`update ${n.subscriptionMigrations} m set state = 'not_sent', updated_at = now()
    where m.feed = ${feed}::text and m.target_version = ${version}::text and m.state = 'pending'
      and not exists (select 1 from ${n.prescriptions} p where p.feed = m.feed and p.external_id = m.external_id)
      and exists (select 1 from ${n.outbox} o where o.feed = m.feed and o.external_id = m.external_id and o.kind = 'send' and o.sent_through = ${oldBaseUrl}::text)
      and not exists (select 1 from ${n.outbox} o where o.feed = m.feed and o.external_id = m.external_id and o.kind = 'send'
        and o.sent_through = ${oldBaseUrl}::text and o.state <> 'failed')`);
}
