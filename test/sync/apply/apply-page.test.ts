import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { queryRows, type Db } from '../../../src/db/connection.js';
import { applyPage, type ApplyPageInput } from '../../../src/sync/apply/apply-page.js';
import { loadCheckpoint } from '../../../src/sync/poll/checkpoint.js';
import { preparePage } from '../../../src/sync/apply/prepare-page.js';
import { listLocalPrescriptions, registerLocalPrescriptions } from '../../../src/sync/matching/local-prescriptions.js';
import { listQuarantine } from '../../../src/store-api/triage/quarantine-list.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { event, identity, truncateStore } from '../../support/sync/fixtures.js';

const FEED = 'default';
let tdb: TestDatabase;
let db: Db;
let version: number;

beforeAll(async () => {
  tdb = await createTestDatabase('sync_apply_page');
  db = tdb.database.db;
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  await truncateStore(db);
  version = (await loadCheckpoint(db, FEED)).version;
  await registerLocalPrescriptions(db, [
    { external_id: 'rx-ada', prescription_identity: identity() },
    { external_id: 'rx-bob', prescription_identity: identity({ patient_first_name: 'Bob', erx_message_id: 'ERX-B' }) },
  ]);
});

/** Applies the next page at the current version, as the poller does. */
async function apply(events: unknown[], iterator = `it-${version + 1}`) {
  const input: ApplyPageInput = { feed: FEED, expectedVersion: version, nextIterator: iterator, events };
  const result = await applyPage(db, input);
  version = result.version;
  return result;
}

async function prescription(externalId: string) {
  const all = await listLocalPrescriptions(db);
  return all.find((p) => p.external_id === externalId);
}

describe('applyPage', () => {
  test('happy path: events stored, matched, status advanced, checkpoint moved', async () => {
    const result = await apply([
      event('e1', 'accepted', '2024-12-10T10:00:00Z'),
      event('e2', 'ordered', '2024-12-10T10:05:00Z'),
      event('e3', 'accepted', '2024-12-10T10:00:00Z', { patient_first_name: 'Bob', erx_message_id: 'ERX-B' }),
    ]);
    expect(result).toMatchObject({
      version: 1,
      received: 3,
      inserted: 3,
      duplicates: 0,
      matched: 3,
      statusChanges: 2,
      quarantined: { malformed: 0, unmatched: 0, ambiguous: 0, unsupported_version: 0 },
    });
    expect(await prescription('rx-ada')).toMatchObject({ status: 'ordered', status_occurred_at: '2024-12-10T10:05:00.000Z', events: 2 });
    expect(await prescription('rx-bob')).toMatchObject({ status: 'accepted', events: 1 });
    const checkpoint = await loadCheckpoint(db, FEED);
    expect(checkpoint).toMatchObject({ iterator: 'it-1', version: 1, pagesApplied: 1, eventsApplied: 3, eventsQuarantined: 0 });
    // the body is stored once (issue 37): the payload is read inside raw, events.payload is no longer written
    const [stored] = await queryRows<{ payload: unknown; raw: unknown; status_rank: number; copy: unknown }>(
      db,
      sql`select raw -> 'payload' as payload, raw, status_rank, payload as copy from intake_sync.events where id = 'e2'`,
    );
    expect(stored).toEqual({ payload: {}, raw: event('e2', 'ordered', '2024-12-10T10:05:00Z'), status_rank: 2, copy: null });
  });

  test('duplicates inside a page and across pages count once', async () => {
    const e1 = event('e1', 'accepted', '2024-12-10T10:00:00Z');
    const first = await apply([e1, e1, event('e2', 'ordered', '2024-12-10T10:05:00Z')]);
    expect(first).toMatchObject({ received: 3, inserted: 2, duplicates: 1, statusChanges: 1 });
    const second = await apply([e1, event('e2', 'ordered', '2024-12-10T10:05:00Z')]);
    expect(second).toMatchObject({ received: 2, inserted: 0, duplicates: 2, statusChanges: 0, matched: 0 });
    expect(await prescription('rx-ada')).toMatchObject({ status: 'ordered', events: 2 });
    expect(await loadCheckpoint(db, FEED)).toMatchObject({ pagesApplied: 2, eventsApplied: 2 });
  });

  test('out of order across pages never regresses', async () => {
    await apply([event('e3', 'dispensed', '2024-12-10T10:10:00Z')]);
    const late = await apply([event('e1', 'accepted', '2024-12-10T10:00:00Z'), event('e2', 'ordered', '2024-12-10T10:05:00Z')]);
    expect(late).toMatchObject({ inserted: 2, matched: 2, statusChanges: 0 });
    expect(await prescription('rx-ada')).toMatchObject({ status: 'dispensed', status_occurred_at: '2024-12-10T10:10:00.000Z', events: 3 });
  });

  test('within a page the highest rank wins, whatever the order', async () => {
    await apply([
      event('e4', 'delivered', '2024-12-10T10:15:00Z'),
      event('e1', 'accepted', '2024-12-10T10:00:00Z'),
      event('e3', 'dispensed', '2024-12-10T10:10:00Z'),
    ]);
    const [row] = await queryRows<{ status: string; status_event_id: string; status_rank: number }>(
      db,
      sql`select status, status_event_id, status_rank from intake_sync.prescriptions where external_id = 'rx-ada'`,
    );
    expect(row).toEqual({ status: 'delivered', status_event_id: 'e4', status_rank: 4 });
  });

  test('rejected is terminal', async () => {
    await apply([event('e1', 'accepted', '2024-12-10T10:00:00Z'), event('r1', 'rejected', '2024-12-10T10:01:00Z')]);
    const later = await apply([event('e4', 'delivered', '2024-12-10T11:00:00Z')]);
    expect(later).toMatchObject({ inserted: 1, matched: 1, statusChanges: 0 });
    expect(await prescription('rx-ada')).toMatchObject({ status: 'rejected', events: 3 });
  });

  test('an unknown name is kept in history and changes no status', async () => {
    const result = await apply([event('x1', 'on_hold', '2024-12-10T10:00:00Z')]);
    expect(result).toMatchObject({ inserted: 1, matched: 1, statusChanges: 0 });
    expect(await prescription('rx-ada')).toMatchObject({ status: null, status_occurred_at: null, events: 1 });
    const [row] = await queryRows<{ name: string; status_rank: number | null }>(
      db,
      sql`select name, status_rank from intake_sync.events where id = 'x1'`,
    );
    expect(row).toEqual({ name: 'on_hold', status_rank: null });
  });

  test('malformed, unmatched and ambiguous events are quarantined with reason and raw; the page goes on', async () => {
    await registerLocalPrescriptions(db, [{ external_id: 'rx-twin', prescription_identity: identity({ patient_last_name: 'Twin' }) }]);
    await registerLocalPrescriptions(db, [{ external_id: 'rx-twin2', prescription_identity: identity({ patient_last_name: 'Twin' }) }]);
    const noId = { name: 'accepted' };
    const badTime = { ...event('bad-1', 'accepted', 'whenever') };
    const result = await apply([
      noId,
      badTime,
      'not an object',
      event('u1', 'accepted', '2024-12-10T10:00:00Z', { patient_first_name: 'Nobody' }),
      event('a1', 'accepted', '2024-12-10T10:00:00Z', { patient_last_name: 'Twin' }),
      event('ok', 'accepted', '2024-12-10T10:00:00Z'),
    ]);
    expect(result).toMatchObject({
      received: 6,
      inserted: 3,
      matched: 1,
      statusChanges: 1,
      quarantined: { malformed: 3, unmatched: 1, ambiguous: 1, unsupported_version: 0 },
    });
    const entries = await listQuarantine(db, { includeRaw: true });
    const byKey = new Map(entries.map((e) => [e.quarantine_key, e]));
    expect(byKey.get('bad-1')).toMatchObject({ event_id: 'bad-1', reason: 'malformed', raw: badTime, seen_count: 1 });
    expect(byKey.get('bad-1')?.detail).toMatch(/^occurred_at: /);
    // keyed with the database's secret, never the bare digest of the body (issue 33 §5)
    const hashed = entries.filter((e) => e.quarantine_key.startsWith('k:'));
    expect(hashed.map((e) => e.raw)).toEqual(expect.arrayContaining([noId, { raw: 'not an object' }]));
    expect(hashed.every((e) => e.event_id === null && /^k:[0-9a-f]{64}$/.test(e.quarantine_key))).toBe(true);
    expect(entries.some((e) => e.quarantine_key.startsWith('sha256:'))).toBe(false);
    expect(byKey.get('u1')).toMatchObject({ reason: 'unmatched', event_id: 'u1' });
    expect(byKey.get('a1')).toMatchObject({ reason: 'ambiguous', detail: '2 local prescriptions match (external_id rx-twin, rx-twin2)' });
    // well-formed findings are history too, linked to nothing
    const linked = await queryRows<{ id: string; prescription_id: unknown }>(
      db,
      sql`select id, prescription_id from intake_sync.events order by id`,
    );
    expect(linked.map((r) => [r.id, r.prescription_id === null])).toEqual([
      ['a1', true],
      ['ok', false],
      ['u1', true],
    ]);
    expect(await loadCheckpoint(db, FEED)).toMatchObject({ eventsApplied: 3, eventsQuarantined: 5 });
  });

  test('an event of an api_version this build does not read is stored and quarantined (raw kept), never matched or applied', async () => {
    const future = { ...event('f1', 'delivered', '2024-12-10T10:20:00Z'), api_version: '2026-01-01' };
    const result = await apply([future, { ...event('n1', 'accepted', '2024-12-10T10:00:00Z'), api_version: '2025-06-01' }]);
    expect(result).toMatchObject({
      inserted: 2,
      matched: 1,
      statusChanges: 1,
      quarantined: { malformed: 0, unmatched: 0, ambiguous: 0, unsupported_version: 1 },
    });
    // the 2025-06-01 event applied; the 2026 one (a later status, same prescription) did not
    expect(await prescription('rx-ada')).toMatchObject({ status: 'accepted', events: 1 });
    const [entry] = await listQuarantine(db, { includeRaw: true });
    expect(entry).toMatchObject({ event_id: 'f1', reason: 'unsupported_version', raw: future });
    expect(entry?.detail).toBe('api_version "2026-01-01" is not one this build reads (2024-12-10, 2025-06-01)');
    const [stored] = await queryRows<{ prescription_id: unknown }>(db, sql`select prescription_id from intake_sync.events where id = 'f1'`);
    expect(stored).toEqual({ prescription_id: null });
    // rematch looks at unmatched and ambiguous findings only: the held event stays held
    await db.execute(sql`select * from intake_sync.rematch_held()`);
    expect(await prescription('rx-ada')).toMatchObject({ status: 'accepted' });
    expect(await loadCheckpoint(db, FEED)).toMatchObject({ eventsQuarantined: 1 });
  });

  test('a draining source moves its own position; the checkpoint applies only while read from the current source', async () => {
    const OLD = 'http://127.0.0.1:1/intake_api/2024-12-10';
    const NEW = 'http://127.0.0.1:1/intake_api/2025-06-01';
    await db.execute(sql`insert into intake_sync.feed_sources (feed, base_url, api_version, state, iterator) values
      (${FEED}, ${OLD}, '2024-12-10', 'draining', 'old-it'), (${FEED}, ${NEW}, '2025-06-01', 'current', null)`);
    // a page read from the old URL cannot move the feed's checkpoint any more (a stale worker)
    await expect(applyPage(db, { feed: FEED, expectedVersion: version, nextIterator: 'x', events: [], readFrom: OLD })).rejects.toThrow(
      expect.objectContaining({ name: 'CheckpointConflictError' }),
    );
    const fromNew = await applyPage(db, {
      feed: FEED,
      expectedVersion: version,
      nextIterator: 'new-1',
      events: [event('e1', 'accepted', '2024-12-10T10:00:00Z')],
      readFrom: NEW,
    });
    expect(fromNew).toMatchObject({ inserted: 1, statusChanges: 1 });
    const drained = await applyPage(db, {
      feed: FEED,
      expectedVersion: 0,
      nextIterator: 'old-1',
      events: [event('e1', 'accepted', '2024-12-10T10:00:00Z'), event('e0', 'ordered', '2024-12-10T10:05:00Z')],
      readFrom: OLD,
      draining: true,
    });
    expect(drained).toMatchObject({ version: 1, inserted: 1, duplicates: 1, statusChanges: 1 });
    const rows = await queryRows<{ base_url: string; iterator: string | null; version: unknown; events_applied: unknown }>(
      db,
      sql`select base_url, iterator, version, events_applied from intake_sync.feed_sources order by base_url`,
    );
    expect(rows.map((r) => [r.iterator, Number(r.version), Number(r.events_applied)])).toEqual([
      ['old-1', 1, 1],
      [null, 0, 0],
    ]);
    expect(await loadCheckpoint(db, FEED)).toMatchObject({ iterator: 'new-1' });
    // retired: the draining position no longer moves
    await db.execute(sql`update intake_sync.feed_sources set state = 'retired' where base_url = ${OLD}`);
    await expect(
      applyPage(db, { feed: FEED, expectedVersion: 1, nextIterator: 'old-2', events: [], readFrom: OLD, draining: true }),
    ).rejects.toThrow(expect.objectContaining({ name: 'CheckpointConflictError' }));
  });

  test('a malformed event seen again is counted, not duplicated', async () => {
    const bad = { id: 'bad-2', name: 'accepted' };
    await apply([bad]);
    await apply([bad, bad]);
    const [entry] = await listQuarantine(db);
    expect(entry).toMatchObject({ quarantine_key: 'bad-2', seen_count: 3 });
    expect(await listQuarantine(db)).toHaveLength(1);
  });

  test('bodies Postgres cannot store (NUL) are quarantined as text instead of failing the page', async () => {
    const nul = event('nul-1', 'accepted', '2024-12-10T10:00:00Z');
    nul.payload = { note: 'a\u0000b' };
    const literal = event('lit-1', 'accepted', '2024-12-10T10:00:00Z');
    literal.payload = { note: 'a\\u0000b' };
    const result = await apply([nul, literal]);
    expect(result).toMatchObject({ inserted: 1, quarantined: { malformed: 1 } });
    const [entry] = await listQuarantine(db, { reason: 'malformed', includeRaw: true });
    expect(entry).toMatchObject({ event_id: 'nul-1', raw: { raw_json: JSON.stringify(nul) } });
  });

  test('a 1 MB payload applies', async () => {
    const big = event('big', 'accepted', '2024-12-10T10:00:00Z');
    big.payload = { blob: 'x'.repeat(1024 * 1024) };
    const result = await apply([big]);
    expect(result).toMatchObject({ inserted: 1, matched: 1, statusChanges: 1 });
    const [row] = await queryRows<{ size: number }>(
      db,
      sql`select length(raw -> 'payload' ->> 'blob')::int as size from intake_sync.events where id = 'big'`,
    );
    expect(row?.size).toBe(1024 * 1024);
  });

  test('a null payload is kept as JSON null inside raw, the body as received', async () => {
    const nullPayload = { ...event('np', 'accepted', '2024-12-10T10:00:00Z'), payload: null };
    await apply([nullPayload]);
    const [row] = await queryRows<{ kind: string | null; raw_text: string }>(
      db,
      sql`select json_typeof(raw -> 'payload') as kind, raw::text as raw_text from intake_sync.events where id = 'np'`,
    );
    expect(row).toEqual({ kind: 'null', raw_text: JSON.stringify(nullPayload) });
  });

  test('a page prepared ahead applies the same as raw events', async () => {
    const events = [event('e1', 'accepted', '2024-12-10T10:00:00Z'), { id: 'broken' }];
    const input: ApplyPageInput = {
      feed: FEED,
      expectedVersion: version,
      nextIterator: 'it-prepared',
      events,
      prepared: preparePage(events),
    };
    const result = await applyPage(db, input);
    expect(result).toMatchObject({ received: 2, inserted: 1, matched: 1, quarantined: { malformed: 1 } });
    expect(result.timingsMs.validate).toBe(0);
  });

  test('an empty page still moves the checkpoint', async () => {
    const result = await apply([], 'it-empty');
    expect(result).toMatchObject({ version: 1, received: 0, inserted: 0 });
    expect(await loadCheckpoint(db, FEED)).toMatchObject({ iterator: 'it-empty', version: 1, pagesApplied: 1 });
  });
});
