import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../../src/db/connection.js';
import { runMigrations } from '../../../src/db/migrate.js';
import { readMigrationFiles } from '../../../src/db/migration-files.js';
import { createEmptyDatabase, type EmptyDatabase, NEEDS_POSTGRES, postgresReachable } from '../../support/db.js';

// drizzle/0032_feed_serial_ids.sql on a database with rows (issue 33 §4): each feed's existing rows are
// numbered 1..n in their old id order, the sends' audit rows name their outbox row by its new number
// (or, the row purged, not at all), and the next row of each feed continues after its last number.

const reachable = await postgresReachable();
const files = readMigrationFiles();
const before = files.findIndex((f) => f.tag.startsWith('0032_'));

describe.skipIf(!reachable)(`0032 numbers existing rows per feed (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  let empty: EmptyDatabase;
  let database: Database;
  beforeAll(async () => {
    empty = await createEmptyDatabase('feed_serial_upgrade');
    database = await openDatabase({ url: empty.url });
    expect(before).toBeGreaterThan(0);
    await runMigrations(database, { files: files.slice(0, before), api: [] });
    const sql = empty.sql;
    await sql`insert into intake_sync.feed_checkpoints (feed) values ('east'), ('west')`;
    // interleaved: west, east, west, east, east, west
    for (const [k, feed] of ['west', 'east', 'west', 'east', 'east', 'west'].entries()) {
      await sql`insert into intake_sync.outbox (feed, external_id, kind) values (${feed}, ${`rx-${k}`}, 'send')`;
      await sql`insert into intake_sync.status_changes (prescription_id, external_id, feed, new_status) values (${k + 1}, ${`rx-${k}`}, ${feed}, 'accepted')`;
      await sql`insert into intake_sync.audit_entries (actor, action, feed, subject, detail)
        select 'app', 'outbox.send', ${feed}, ${`rx-${k}`}, jsonb_build_object('outbox_id', o.id) from intake_sync.outbox o where o.external_id = ${`rx-${k}`}`;
    }
    // a send whose outbox row was purged since, and a row of no feed
    await sql`insert into intake_sync.audit_entries (actor, action, feed, subject, detail) values ('app', 'outbox.send', 'east', 'rx-gone', '{"outbox_id": 999}')`;
    await sql`insert into intake_sync.audit_entries (actor, action, feed, subject) values ('owner', 'migrate', null, null)`;
    await runMigrations(database);
  }, 120_000);
  afterAll(async () => {
    await database?.close();
    await empty?.drop();
  });

  it('numbers each feed 1..n in the old order', async () => {
    for (const table of ['outbox', 'status_changes']) {
      const rows = await empty.sql.unsafe<{ feed: string; external_id: string; feed_serial: string }[]>(
        `select feed, external_id, feed_serial::text from intake_sync.${table} order by id`,
      );
      expect(rows.map((r) => `${r.feed}:${r.external_id}:${r.feed_serial}`)).toEqual([
        'west:rx-0:1',
        'east:rx-1:1',
        'west:rx-2:2',
        'east:rx-3:2',
        'east:rx-4:3',
        'west:rx-5:3',
      ]);
    }
    const audit = await empty.sql<{ feed: string | null; subject: string | null; feed_serial: string; outbox_id: unknown }[]>`
      select feed, subject, feed_serial::text, detail -> 'outbox_id' as outbox_id from intake_sync.audit_entries order by id`;
    expect(audit.map((r) => [r.feed, r.subject, r.feed_serial, r.outbox_id ?? null])).toEqual([
      ['west', 'rx-0', '1', 1],
      ['east', 'rx-1', '1', 1],
      ['west', 'rx-2', '2', 2],
      ['east', 'rx-3', '2', 2],
      ['east', 'rx-4', '3', 3],
      ['west', 'rx-5', '3', 3],
      // the purged row's global id is gone from the detail
      ['east', 'rx-gone', '4', null],
      [null, null, '1', null],
    ]);
  });

  it("continues each feed's numbers after the upgrade, whatever the writer gives", async () => {
    // the migration made each feed's sequences (and the audit trail's of no feed): the first write creates none
    const made = await empty.sql<{ relname: string }[]>`
      select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'intake_sync' and c.relkind = 'S' and c.relname like 'feed_serial\_%' order by 1`;
    const hash = (feed: string) => createHash('sha256').update(feed).digest('hex').slice(0, 32);
    expect(made.map((r) => r.relname)).toEqual(
      ['audit_east', 'audit_west', 'audit_', 'changes_east', 'changes_west', 'outbox_east', 'outbox_west']
        .map((name) => {
          const [tag, feed] = name.split('_') as [string, string];
          return `feed_serial_${tag}_${hash(feed)}`;
        })
        .sort(),
    );
    await empty.sql`insert into intake_sync.outbox (feed, external_id, kind, feed_serial) values ('east', 'rx-new', 'send', 1)`;
    await empty.sql`insert into intake_sync.audit_entries (actor, action, feed) values ('owner', 'migrate', null)`;
    const [row] = await empty.sql<{ n: string }[]>`select feed_serial::text as n from intake_sync.outbox where external_id = 'rx-new'`;
    expect(row?.n).toBe('4');
    const [none] = await empty.sql<{ n: string }[]>`select max(feed_serial)::text as n from intake_sync.audit_entries where feed is null`;
    expect(none?.n).toBe('2');
  });
});
