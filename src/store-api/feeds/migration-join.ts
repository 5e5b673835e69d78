import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import { namesOf } from '../../db/store-names.js';

/**
 * A prescription sent or subscribed outside the outbox (CLI `prescriptions send`, `prescriptions import
 * --subscribe`: then with the subscription's id, so the rerun cancels it at once) through a base URL that stopped
 * being the feed's current source while its POST was in flight (a migration started meanwhile, or even
 * finished): its automatic subscription is at the old version, outside the migration's fixed set. It
 * joins the set (a pending progress row, so the migration is not complete until a rerun moves it), and
 * the old source is read until then: back to draining with its completion cleared; a retired one is
 * reopened from the position it kept. The outbox needs none of this: its claim fixes the URL under the
 * source lock (src/sync/version-migration/source-lock.ts). True when it joined.
 */
export async function joinMigrationAfterSend(
  db: Db,
  feed: string,
  sentThrough: string,
  externalId: string,
  subscriptionId?: string,
): Promise<boolean> {
  const n = namesOf(db);
  return db.transaction(async (tx) => {
    const reopened = await queryRows<{ base_url: string }>(
      tx,
      sql`update ${n.feedSources} set state = 'draining', retired_at = null, migration_completed_at = null, updated_at = now()
          where feed = ${feed}::text and base_url = ${sentThrough}::text and state in ('draining', 'retired')
          returning base_url`,
    );
    if (reopened.length === 0) return false;
    // already in the set: its known old subscriptions grow; moved already, it goes back to cancelling
    await tx.execute(sql`insert into ${n.subscriptionMigrations} as m (feed, external_id, target_version, old_subscription_ids)
      select c.feed, ${externalId}::text, c.api_version, ${JSON.stringify(subscriptionId === undefined ? [] : [subscriptionId])}::jsonb
      from ${n.feedSources} c where c.feed = ${feed}::text and c.state = 'current'
      on conflict (feed, external_id, target_version) do update set
        old_subscription_ids = case when m.old_subscription_ids @> excluded.old_subscription_ids then m.old_subscription_ids
          else m.old_subscription_ids || excluded.old_subscription_ids end,
        state = case when m.old_subscription_ids @> excluded.old_subscription_ids then m.state
          when m.new_subscription_id is not null then 'created' else m.state end,
        updated_at = now()`);
    return true;
  });
}
