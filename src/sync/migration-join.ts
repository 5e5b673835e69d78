import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../db/connection.js';
import { namesOf } from '../db/store-names.js';

/**
 * A prescription sent outside the outbox (CLI `prescriptions send`) through a base URL that stopped
 * being the feed's current source while its POST was in flight (a migration started meanwhile, or even
 * finished): its automatic subscription is at the old version, outside the migration's fixed set. It
 * joins the set (a pending progress row, so the migration is not complete until a rerun moves it), and
 * the old source is read until then: back to draining with its completion cleared; a retired one is
 * reopened from the position it kept. The outbox needs none of this: its claim fixes the URL under the
 * source lock (source-lock.ts). True when it joined.
 */
export async function joinMigrationAfterSend(db: Db, feed: string, sentThrough: string, externalId: string): Promise<boolean> {
  const n = namesOf(db);
  return db.transaction(async (tx) => {
    const reopened = await queryRows<{ base_url: string }>(
      tx,
      sql`update ${n.feedSources} set state = 'draining', retired_at = null, migration_completed_at = null, updated_at = now()
          where feed = ${feed}::text and base_url = ${sentThrough}::text and state in ('draining', 'retired')
          returning base_url`,
    );
    if (reopened.length === 0) return false;
    await tx.execute(sql`insert into ${n.subscriptionMigrations} (feed, external_id, target_version, old_subscription_ids)
      select c.feed, ${externalId}::text, c.api_version, '[]'::jsonb from ${n.feedSources} c
      where c.feed = ${feed}::text and c.state = 'current'
      on conflict do nothing`);
    return true;
  });
}
