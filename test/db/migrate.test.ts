import { afterAll, beforeAll, expect, test } from 'vitest';
import { queryRows } from '../../src/db/connection.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { sql } from 'drizzle-orm';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase('smoke');
});
afterAll(async () => {
  await tdb.drop();
});

test('migrations create the store tables in the intake_sync schema, the ledger included, and nothing in public', async () => {
  const rows = await queryRows<{ table_name: string }>(
    tdb.database.db,
    sql`select table_name from information_schema.tables where table_schema = 'intake_sync' and table_type = 'BASE TABLE' order by 1`,
  );
  expect(rows.map((r) => r.table_name)).toEqual([
    '__drizzle_migrations',
    '__sql_api_applied',
    'audit_entries',
    'change_clocks',
    'change_commit_feeds',
    'change_commits',
    'change_horizons',
    'checkpoint_resets',
    'events',
    'feed_access',
    'feed_checkpoints',
    'feed_deadlines',
    'feed_leases',
    'feed_locks',
    'feed_pauses',
    'feed_retirements',
    'feed_sources',
    'feed_stops',
    'finding_key_secret',
    'lease_members',
    'outbox',
    'owner_settings',
    'prescriptions',
    'quarantine',
    'retention_runs',
    'status_changes',
    'subscription_links',
    'subscription_migrations',
  ]);
  const outside = await queryRows<{ n: number }>(
    tdb.database.db,
    sql`select count(*)::int as n from pg_class c join pg_namespace s on s.oid = c.relnamespace
        where s.nspname in ('public', 'drizzle')`,
  );
  expect(outside[0]?.n).toBe(0);
});
