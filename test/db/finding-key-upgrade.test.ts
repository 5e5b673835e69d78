import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { runMigrations } from '../../src/db/migrate.js';
import { readMigrationFiles } from '../../src/db/migration-files.js';
import { createEmptyDatabase, NEEDS_POSTGRES, postgresReachable, type EmptyDatabase } from '../support/db.js';

const reachable = await postgresReachable();
const files = readMigrationFiles();
const BEFORE = files.slice(
  0,
  files.findIndex((f) => f.tag.endsWith('_tenant_walls')),
);

// issue 33 §5: an upgrade re-keys the malformed findings (sha256 of the body -> keyed with the
// database's secret) without losing their history: the audit rows naming a finding follow it.
describe.skipIf(!reachable)(`an upgrade re-keys malformed findings (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  let db: EmptyDatabase;
  const body = '{"id":null,"patient_dob":"1984-03-07"}';
  const oldKey = `sha256:${createHash('sha256').update(body).digest('hex')}`;

  beforeAll(async () => {
    db = await createEmptyDatabase('finding_rekey');
    const database = await openDatabase({ url: db.url, onnotice: () => {} });
    try {
      await runMigrations(database, { files: BEFORE, api: [] });
    } finally {
      await database.close();
    }
    await db.sql.unsafe(
      `insert into intake_sync.quarantine (quarantine_key, feed, reason, detail, raw) values ($1, 'clinic-a', 'malformed', '(event): not an event', '{}'),
         ('ev-7', 'clinic-a', 'unmatched', 'no match', '{}')`,
      [oldKey],
    );
    await db.sql.unsafe(
      `insert into intake_sync.audit_entries (actor, action, feed, subject, detail) values
         ('ops', 'quarantine.dismiss', 'clinic-a', $1, '{}'), ('ops', 'quarantine.dismiss', 'clinic-b', $1, '{}'),
         ('ops', 'event.skip', 'clinic-a', $1, jsonb_build_object('at', '1', 'sha256', $2::text, 'bytes', 40)), ('ops', 'quarantine.dismiss', 'clinic-a', 'ev-7', '{}')`,
      [oldKey, oldKey.slice(7)],
    );
    const database2 = await openDatabase({ url: db.url, onnotice: () => {} });
    try {
      await runMigrations(database2);
    } finally {
      await database2.close();
    }
  }, 120_000);
  afterAll(async () => {
    await db?.drop();
  });

  it('the key is k: and sha256(secret || old digest key); an id-keyed finding keeps its id', async () => {
    const [secret] = await db.sql.unsafe<{ secret: Buffer }[]>('select secret from intake_sync.finding_key_secret');
    expect(secret?.secret.length).toBe(32);
    const expected = `k:${createHash('sha256')
      .update(Buffer.concat([secret?.secret ?? Buffer.alloc(0), Buffer.from(oldKey)]))
      .digest('hex')}`;
    const keys = await db.sql.unsafe<{ quarantine_key: string }[]>('select quarantine_key from intake_sync.quarantine order by id');
    expect(keys.map((k) => k.quarantine_key)).toEqual([expected, 'ev-7']);
    // the worker's key for the same body seen again is the same: the finding's seen_count grows, no twin
    const [again] = await db.sql.unsafe<{ key: string }[]>('select intake_sync._finding_key($1) as key', [oldKey]);
    expect(again?.key).toBe(expected);
  });

  it("the finding's audit rows name the new key (the same feed's only), and event.skip keeps no digest of the body", async () => {
    const rows = await db.sql.unsafe<{ action: string; feed: string; subject: string; detail: Record<string, unknown> }[]>(
      'select action, feed, subject, detail from intake_sync.audit_entries order by id',
    );
    const [{ quarantine_key: newKey } = { quarantine_key: '' }] = await db.sql.unsafe<{ quarantine_key: string }[]>(
      `select quarantine_key from intake_sync.quarantine where reason = 'malformed'`,
    );
    expect(rows).toEqual([
      { action: 'quarantine.dismiss', feed: 'clinic-a', subject: newKey, detail: {} },
      // another feed's row naming the same text is not this finding's: left as it was
      { action: 'quarantine.dismiss', feed: 'clinic-b', subject: oldKey, detail: {} },
      { action: 'event.skip', feed: 'clinic-a', subject: newKey, detail: { at: '1', bytes: 40 } },
      { action: 'quarantine.dismiss', feed: 'clinic-a', subject: 'ev-7', detail: {} },
    ]);
    expect(JSON.stringify(rows.filter((r) => r.feed === 'clinic-a'))).not.toContain(oldKey.slice(7));
  });
});
