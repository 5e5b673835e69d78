import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { samplePrescription } from '../../../src/sandbox/fixtures.js';
import { applyPage } from '../../../src/sync/apply/apply-page.js';
import { loadCheckpoint } from '../../../src/sync/poll/checkpoint.js';
import { rematch } from '../../../src/operations/matching/rematch-held.js';
import { registerFeeds } from '../../../src/db/feed-registry.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { event, identity, truncateStore } from '../../support/sync/fixtures.js';
import { plainSql, sqlError, type PlainSql } from '../../support/sql-api/plain-sql.js';

// Several feeds (operator accounts) in one schema, through the SQL API as an application calls it:
// the feed is an optional last argument defaulting to 'default', external_id is unique per feed,
// and an event of one feed never matches a prescription of another (drizzle/0006_feeds_api.sql).

let tdb: TestDatabase;
let app: PlainSql;

beforeAll(async () => {
  tdb = await createTestDatabase('sql_api_feeds');
  app = plainSql(tdb);
});
afterAll(async () => {
  await app.close();
  await tdb.drop();
});
beforeEach(async () => {
  await truncateStore(tdb.database.db);
  // a deployment with FEEDS_FILE naming default, clinic-a and clinic-b: `intake-sync migrate` (or the daemon) registers both
  await registerFeeds(tdb.database.db, ['clinic-a', 'clinic-b'], null);
});

const json = (value: unknown) => JSON.stringify(value);

async function applyEvents(feed: string, events: unknown[]) {
  const { db } = tdb.database;
  const { version } = await loadCheckpoint(db, feed);
  return applyPage(db, { feed, expectedVersion: version, nextIterator: `after-v${version}`, events });
}

const statuses = () =>
  app.query(`select feed, external_id, status, events from "intake_sync".prescription_status order by feed, external_id`);

describe('the feed argument', () => {
  test('the same external_id in two feeds is two prescriptions; the two-argument call is feed default', async () => {
    await app.query(`select * from "intake_sync".register_prescription($1::text, $2::text::jsonb)`, ['rx-1', json(identity())]);
    await app.query(`select * from "intake_sync".register_prescription($1::text, $2::text::jsonb, $3::text)`, [
      'rx-1',
      json(identity()),
      'clinic-b',
    ]);
    // named argument form too
    await app.query(`select * from "intake_sync".register_prescription('rx-2', $1::text::jsonb, feed => 'clinic-b')`, [json(identity())]);
    expect(await statuses()).toEqual([
      { feed: 'clinic-b', external_id: 'rx-1', status: null, events: 0 },
      { feed: 'clinic-b', external_id: 'rx-2', status: null, events: 0 },
      { feed: 'default', external_id: 'rx-1', status: null, events: 0 },
    ]);
  });

  test("an event of one feed matches only its own feed's prescription, through the page apply and the registration", async () => {
    await app.query(`select * from "intake_sync".register_prescription('rx-a', $1::text::jsonb, 'clinic-a')`, [json(identity())]);
    await app.query(`select * from "intake_sync".register_prescription('rx-b', $1::text::jsonb, 'clinic-b')`, [json(identity())]);
    // identical identities in two feeds: not ambiguous, each event goes to its own feed's prescription
    await applyEvents('clinic-a', [event('a-1', 'accepted', '2024-12-10T10:00:00Z'), event('a-2', 'dispensed', '2024-12-10T11:00:00Z')]);
    await applyEvents('clinic-b', [event('b-1', 'accepted', '2024-12-10T10:00:00Z')]);
    // held in clinic-c (no prescription there), and registering one in the default feed does not take it
    await applyEvents('clinic-c', [event('c-1', 'ordered', '2024-12-10T10:00:00Z')]);
    await app.query(`select * from "intake_sync".register_prescription('rx-d', $1::text::jsonb)`, [json(identity())]);
    expect(await statuses()).toEqual([
      { feed: 'clinic-a', external_id: 'rx-a', status: 'dispensed', events: 2 },
      { feed: 'clinic-b', external_id: 'rx-b', status: 'accepted', events: 1 },
      { feed: 'default', external_id: 'rx-d', status: null, events: 0 },
    ]);
    expect(await rematch(tdb.database.db, { feed: 'default' })).toMatchObject({ examined: 0 });
    expect(await rematch(tdb.database.db)).toMatchObject({ examined: 1, matched: 0, stillUnmatched: 1 });
    // registered in its own feed, it matches at once
    const [registered] = await app.query(`select * from "intake_sync".register_prescription('rx-c', $1::text::jsonb, 'clinic-c')`, [
      json(identity()),
    ]);
    expect(registered).toMatchObject({ external_id: 'rx-c', rematched: 1, status: 'ordered' });
  });

  test("the change feed names each change's feed", async () => {
    await app.query(`select * from "intake_sync".register_prescription('rx-a', $1::text::jsonb, 'clinic-a')`, [json(identity())]);
    await applyEvents('clinic-a', [event('a-1', 'accepted', '2024-12-10T10:00:00Z')]);
    const changes = await app.query(`select feed, external_id, new_status from "intake_sync".status_changes_since(null, 10)`);
    expect(changes).toEqual([{ feed: 'clinic-a', external_id: 'rx-a', new_status: 'accepted' }]);
  });

  test('send and cancel queue per feed: one live send per (feed, external_id), and outbox_status shows the feed', async () => {
    const body = json(samplePrescription(1));
    await app.query(`select "intake_sync".send_prescription($1::text::jsonb)`, [body]);
    await app.query(`select "intake_sync".send_prescription($1::text::jsonb, 'clinic-b')`, [body]);
    expect(await sqlError(app.query(`select "intake_sync".send_prescription($1::text::jsonb, 'clinic-b')`, [body]))).toMatchObject({
      code: '23505',
    });
    await app.query(`select "intake_sync".cancel_prescription($1::text, 'clinic-b')`, [samplePrescription(1).external_id]);
    expect(await app.query(`select feed, kind from "intake_sync".outbox_status order by id`)).toEqual([
      { feed: 'default', kind: 'send' },
      { feed: 'clinic-b', kind: 'send' },
      { feed: 'clinic-b', kind: 'cancel' },
    ]);
  });

  test.each([
    ['register', `select * from "intake_sync".register_prescription('rx-9', $1::text::jsonb, $2::text)`, [json(identity())]],
    ['send', `select "intake_sync".send_prescription($1::text::jsonb, $2::text)`, [json(samplePrescription(9))]],
    ['cancel', `select "intake_sync".cancel_prescription($1::text, $2::text)`, ['rx-9']],
  ])('%s refuses a bad feed naming the argument and writes nothing', async (_label, statement, args) => {
    for (const [feed, code, message] of [
      [null, '23502', 'feed: required'],
      ['Clinic B', '22023', 'feed: must be 1-64 of a-z 0-9 _ -'],
      ['x'.repeat(65), '22023', 'feed: must be 1-64 of a-z 0-9 _ -'],
      // issue 17 §2: a typo of a feed is refused, not queued for a worker that does not exist
      [
        'defualt',
        '42704',
        "feed: defualt is not a configured feed (none of this deployment's workers runs it; a feed is registered by `intake-sync migrate` and by `intake-sync run`)",
      ],
    ] as const) {
      expect(await sqlError(app.query(statement, [...args, feed]))).toEqual({ code, message });
    }
    expect(
      await app.query(
        `select (select count(*) from "intake_sync".prescriptions)::int as p, (select count(*) from "intake_sync".outbox)::int as o`,
      ),
    ).toEqual([{ p: 0, o: 0 }]);
  });
});

describe('a feed that was never configured (issue 17 §2)', () => {
  test("send_prescription(p, 'defualt') is refused with 42704 and writes nothing; once the feed is registered it is accepted", async () => {
    const send = `select "intake_sync".send_prescription($1::text::jsonb, $2::text)`;
    expect(await sqlError(app.query(send, [json(samplePrescription(11)), 'defualt']))).toMatchObject({ code: '42704' });
    expect(await app.query(`select count(*)::int as n from "intake_sync".outbox`)).toEqual([{ n: 0 }]);
    // a feed configured but never run: `migrate` registered it
    await registerFeeds(tdb.database.db, ['clinic-c'], null);
    expect(await app.query(send, [json(samplePrescription(11)), 'clinic-c'])).toHaveLength(1);
  });
});
