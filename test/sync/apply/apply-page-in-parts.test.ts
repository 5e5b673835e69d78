import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { queryRows, type Db } from '../../../src/db/connection.js';
import { applyPage } from '../../../src/sync/apply/apply-page.js';
import { loadCheckpoint } from '../../../src/sync/poll/checkpoint.js';
import { listLocalPrescriptions, registerLocalPrescriptions } from '../../../src/sync/matching/local-prescriptions.js';
import { listQuarantine } from '../../../src/store-api/triage/quarantine-list.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { event, identity, truncateStore } from '../../support/sync/fixtures.js';

// Issue 17 part 1: no single event stops a feed. The bounds (limits.ts) quarantine what they catch;
// what they do not catch and Postgres refuses is found by applying the page in parts.

const FEED = 'default';
let tdb: TestDatabase;
let db: Db;
let version: number;

beforeAll(async () => {
  tdb = await createTestDatabase('sync_apply_in_parts');
  db = tdb.database.db;
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  await truncateStore(db);
  await db.execute(sql`alter table intake_sync.events drop constraint if exists test_no_poison`);
  await db.execute(sql`alter table intake_sync.quarantine drop constraint if exists test_no_poison_raw`);
  version = (await loadCheckpoint(db, FEED)).version;
  await registerLocalPrescriptions(db, [
    { external_id: 'rx-ada', prescription_identity: identity() },
    { external_id: 'rx-bob', prescription_identity: identity({ patient_first_name: 'Bob' }) },
  ]);
});

async function apply(events: unknown[]) {
  const result = await applyPage(db, { feed: FEED, expectedVersion: version, nextIterator: `it-${version + 1}`, events });
  version = result.version;
  return result;
}

const statusOf = async (externalId: string) => (await listLocalPrescriptions(db)).find((p) => p.external_id === externalId)?.status;
const storedIds = async () => (await queryRows<{ id: string }>(db, sql`select id from intake_sync.events order by id`)).map((r) => r.id);

describe('bounds: one hostile event is quarantined, the page applies, the checkpoint moves', () => {
  test.each([
    [
      'a payload nested 5,000 levels',
      (e: Record<string, unknown>) => (e.payload = JSON.parse(`${'['.repeat(5000)}${']'.repeat(5000)}`)),
      /nested deeper than 128 levels/,
    ],
    [
      'a 3 kB patient name',
      (e: Record<string, unknown>) => ((e.prescription_identity as Record<string, unknown>).patient_last_name = 'L'.repeat(3000)),
      /^prescription_identity\.patient_last_name: longer than 256/,
    ],
    [
      'a 3 kB erx_message_id',
      (e: Record<string, unknown>) => ((e.prescription_identity as Record<string, unknown>).erx_message_id = 'E'.repeat(3000)),
      /^prescription_identity\.erx_message_id: longer than 256/,
    ],
    ['a 3 kB subscription id', (e: Record<string, unknown>) => (e.subscription_id = 's'.repeat(3000)), /^subscription_id: longer than 256/],
    ['a 1 kB api_version', (e: Record<string, unknown>) => (e.api_version = 'v'.repeat(1000)), /^api_version: longer than 64/],
    ['a 1 kB name', (e: Record<string, unknown>) => (e.name = 'n'.repeat(1000)), /^name: longer than 128/],
    ['NUL in the payload', (e: Record<string, unknown>) => (e.payload = { note: 'a\u0000b' }), /\\u0000 or an unpaired surrogate/],
    ['a lone surrogate in a key', (e: Record<string, unknown>) => (e.payload = { 'k\ud800': 1 }), /\\u0000 or an unpaired surrogate/],
    ['a 3 MB payload', (e: Record<string, unknown>) => (e.payload = { blob: 'x'.repeat(3 * 1024 * 1024) }), /bytes, larger than 2097152/],
  ])('%s', async (_label, spoil, detail) => {
    const bad = event('bad-1', 'delivered', '2024-12-10T10:09:00Z');
    spoil(bad);
    const result = await apply([event('e1', 'accepted', '2024-12-10T10:00:00Z'), bad, event('e2', 'ordered', '2024-12-10T10:05:00Z')]);
    expect(result).toMatchObject({ version: 1, inserted: 2, quarantined: { malformed: 1 } });
    expect(await storedIds()).toEqual(['e1', 'e2']);
    expect(await statusOf('rx-ada')).toBe('ordered');
    const [entry] = await listQuarantine(db, { reason: 'malformed', includeRaw: true });
    expect(entry?.event_id).toBe('bad-1');
    expect(entry?.detail).toMatch(detail);
    expect((entry?.detail ?? '').length).toBeLessThanOrEqual(1000);
    expect(await loadCheckpoint(db, FEED)).toMatchObject({ iterator: 'it-1', version: 1, eventsApplied: 2, eventsQuarantined: 1 });
  });

  test('what is kept of each: the pruned body when too deep, the fingerprint when too large', async () => {
    const deep = event('deep', 'accepted', '2024-12-10T10:00:00Z');
    deep.payload = JSON.parse(`${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`);
    const huge = event('huge', 'accepted', '2024-12-10T10:00:00Z');
    huge.payload = { blob: 'x'.repeat(3 * 1024 * 1024) };
    await apply([deep, huge]);
    const rows = await queryRows<{ event_id: string; depth_kept: boolean; raw: Record<string, unknown> }>(
      db,
      sql`select event_id, raw #>> '{payload,a,a,a}' is not null as depth_kept,
            case when event_id = 'huge' then raw else '{}'::jsonb end as raw
          from intake_sync.quarantine order by event_id`,
    );
    expect(rows[0]).toMatchObject({ event_id: 'deep', depth_kept: true });
    expect(rows[1]).toMatchObject({
      event_id: 'huge',
      raw: { omitted: 'larger than 2097152 bytes', sha256: expect.stringMatching(/^[0-9a-f]{64}$/), bytes: expect.any(Number) },
    });
  });

  test('an id Postgres cannot store never keys a row: the event is kept under its fingerprint', async () => {
    const nulId = { ...event('x\u0000y', 'accepted', '2024-12-10T10:00:00Z') };
    const loneId = { ...event('x\udc00', 'accepted', '2024-12-10T10:00:00Z') };
    const result = await apply([nulId, loneId, event('e1', 'accepted', '2024-12-10T10:00:00Z')]);
    expect(result).toMatchObject({ inserted: 1, quarantined: { malformed: 2 } });
    const entries = await listQuarantine(db);
    expect(entries.map((e) => [e.event_id, e.quarantine_key.slice(0, 2)])).toEqual([
      [null, 'k:'],
      [null, 'k:'],
    ]);
  });
});

describe('defence in depth: a page Postgres refuses is applied in parts', () => {
  test('an offender the bounds allow (a CHECK the test adds) is quarantined by fingerprint; the rest applies once, in order', async () => {
    // NOT VALID: only new rows are checked, like a constraint a DBA adds to a live table
    await db.execute(sql`alter table intake_sync.events add constraint test_no_poison check (name <> 'poison') not valid`);
    const page = [
      event('e1', 'accepted', '2024-12-10T10:00:00Z'),
      event('p1', 'poison', '2024-12-10T10:01:00Z'),
      event('e2', 'ordered', '2024-12-10T10:02:00Z'),
      event('b1', 'accepted', '2024-12-10T10:00:00Z', { patient_first_name: 'Bob' }),
      { id: 'broken' },
      event('p2', 'poison', '2024-12-10T10:03:00Z', { patient_first_name: 'Bob' }),
      event('b2', 'dispensed', '2024-12-10T10:04:00Z', { patient_first_name: 'Bob' }),
      event('unmatched', 'accepted', '2024-12-10T10:00:00Z', { patient_first_name: 'Nobody' }),
    ];
    const result = await apply(page);
    expect(result).toMatchObject({
      version: 1,
      inserted: 5,
      // each part moves statuses forward on its own: accepted then ordered, in the same transaction
      statusChanges: 4,
      quarantined: { malformed: 3, unmatched: 1 },
      refusedByPostgres: { count: 2, sqlStates: ['23514'] },
    });
    expect(await storedIds()).toEqual(['b1', 'b2', 'e1', 'e2', 'unmatched']);
    expect(await statusOf('rx-ada')).toBe('ordered');
    expect(await statusOf('rx-bob')).toBe('dispensed');
    // one page, one move of the position, with every part's totals
    expect(await loadCheckpoint(db, FEED)).toMatchObject({
      iterator: 'it-1',
      version: 1,
      pagesApplied: 1,
      eventsApplied: 5,
      eventsQuarantined: 4,
    });
    const refused = (await listQuarantine(db, { reason: 'malformed', includeRaw: true })).filter((e) => e.event_id === null);
    expect(refused).toHaveLength(2);
    for (const entry of refused) {
      expect(entry.detail).toBe('(event): Postgres refused it (SQLSTATE 23514); kept by fingerprint only');
      expect(entry.raw).toMatchObject({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/), bytes: expect.any(Number) });
      expect(JSON.stringify(entry.raw)).not.toContain('Lovelace');
    }
    // seen again (a replay): the same rows are counted, nothing is duplicated
    version = (await loadCheckpoint(db, FEED)).version;
    const again = await apply(page);
    expect(again).toMatchObject({ inserted: 0, refusedByPostgres: { count: 2 } });
    expect((await listQuarantine(db, { reason: 'malformed' })).filter((e) => e.event_id === null).map((e) => e.seen_count)).toEqual([2, 2]);
  });

  test('a malformed row Postgres refuses is replaced by its fingerprint', async () => {
    await db.execute(
      sql`alter table intake_sync.quarantine add constraint test_no_poison_raw check (raw::text not like '%poison-raw%') not valid`,
    );
    const result = await apply([{ id: 'm1', note: 'poison-raw' }, event('e1', 'accepted', '2024-12-10T10:00:00Z')]);
    expect(result).toMatchObject({ inserted: 1, quarantined: { malformed: 1 }, refusedByPostgres: { count: 1 } });
    const [entry] = await listQuarantine(db, { includeRaw: true });
    expect(entry).toMatchObject({ event_id: null, raw: { omitted: 'refused by Postgres (SQLSTATE 23514)' } });
  });

  test('a moved checkpoint still wins: the page in parts applies nothing', async () => {
    await db.execute(sql`alter table intake_sync.events add constraint test_no_poison check (name <> 'poison') not valid`);
    await apply([]);
    const stale = version - 1;
    await expect(
      applyPage(db, { feed: FEED, expectedVersion: stale, nextIterator: 'x', events: [event('p1', 'poison', '2024-12-10T10:01:00Z')] }),
    ).rejects.toThrow(expect.objectContaining({ name: 'CheckpointConflictError' }));
    expect(await listQuarantine(db)).toEqual([]);
  });
});
