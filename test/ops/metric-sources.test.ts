import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxSource } from '../../src/ops/outbox-source.js';
import { quarantineSource } from '../../src/ops/quarantine-source.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

/** The database-backed gauges read the deployment's schema (Postgres, or PGlite without a server). */
describe('metric sources', () => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await createTestDatabase('metric_sources');
  });
  afterAll(async () => test?.drop());

  it('quarantine: open entries of the feed by reason; resolved ones and other feeds are left out', async () => {
    const q = test.database.names.quarantine;
    const row = (key: string, feed: string, reason: string, resolved: boolean) =>
      sql`insert into ${q} (quarantine_key, feed, reason, detail, raw, resolved_at)
          values (${key}, ${feed}, ${reason}, 'x', '{}'::jsonb, ${resolved ? sql`now()` : sql`null`})`;
    for (const statement of [
      row('a', 'main', 'unmatched', false),
      row('b', 'main', 'unmatched', false),
      row('c', 'main', 'ambiguous', false),
      row('d', 'main', 'malformed', true),
      row('e', 'other', 'malformed', false),
    ]) {
      await test.database.db.execute(statement);
    }
    expect(await quarantineSource(test.database, 'main')()).toEqual({ unmatched: 2, ambiguous: 1, malformed: 0, unsupported_version: 0 });
  });

  it('outbox: pending rows and the age of the oldest pending one', async () => {
    const o = test.database.names.outbox;
    await test.database.db.execute(sql`insert into ${o} (external_id, kind, state, created_at) values
      ('rx-1', 'cancel', 'pending', now() - interval '120 seconds'),
      ('rx-2', 'cancel', 'pending', now() - interval '10 seconds'),
      ('rx-3', 'cancel', 'delivered', now() - interval '1 hour')`);
    const outbox = await outboxSource(test.database)();
    expect(outbox.pending).toBe(2);
    expect(outbox.oldestAgeSeconds).toBeGreaterThanOrEqual(120);
    expect(outbox.oldestAgeSeconds).toBeLessThan(180);
  });
});
