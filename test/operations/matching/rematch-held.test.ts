import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../../src/db/connection.js';
import { applyPage } from '../../../src/sync/apply/apply-page.js';
import { loadCheckpoint } from '../../../src/sync/poll/checkpoint.js';
import {
  ANALYZE_AFTER_INSERTED,
  listLocalPrescriptions,
  registerLocalPrescriptions,
} from '../../../src/sync/matching/local-prescriptions.js';
import { recordSentPrescription } from '../../../src/sync/matching/sent-prescriptions.js';
import { listQuarantine } from '../../../src/store-api/triage/quarantine-list.js';
import { rematch, type RematchBatch } from '../../../src/operations/matching/rematch-held.js';
import { previewRematch } from '../../../src/operations/matching/rematch-preview.js';
import type { PrescriptionRequest } from '../../../src/intake/prescription.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { event, identity, PRESCRIBER_NPI, truncateStore } from '../../support/sync/fixtures.js';

const FEED = 'default';
let tdb: TestDatabase;
let db: Db;

beforeAll(async () => {
  tdb = await createTestDatabase('sync_rematch');
  db = tdb.database.db;
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  await truncateStore(db);
});

async function apply(events: unknown[]) {
  const { version } = await loadCheckpoint(db, FEED);
  return applyPage(db, { feed: FEED, expectedVersion: version, nextIterator: `after-v${version}`, events });
}

describe('local prescriptions and rematch', () => {
  test('registering a matching prescription resolves an unmatched event and sets its status', async () => {
    await apply([event('e1', 'accepted', '2024-12-10T10:00:00Z'), event('e2', 'ordered', '2024-12-10T10:05:00Z')]);
    expect((await listQuarantine(db)).map((q) => q.reason)).toEqual(['unmatched', 'unmatched']);

    const registered = await registerLocalPrescriptions(db, [
      { external_id: 'rx-ada', prescription_identity: identity({ patient_first_name: ' ADA ' }) },
    ]);
    expect(registered).toEqual({ inserted: 1, updated: 0, rematch: { examined: 2, matched: 2, stillUnmatched: 0, stillAmbiguous: 0 } });
    expect(await listLocalPrescriptions(db)).toEqual([
      {
        feed: 'default',
        external_id: 'rx-ada',
        status: 'ordered',
        status_occurred_at: '2024-12-10T10:05:00.000Z',
        events: 2,
        cancellation_requested_at: null,
        subscription_id: null,
      },
    ]);
    expect(await listQuarantine(db)).toEqual([]);
    const resolved = await listQuarantine(db, { includeResolved: true });
    expect(resolved.every((q) => q.resolved_at !== null)).toBe(true);
  });

  test('rematch reports what it examined; a second local turns unmatched into ambiguous', async () => {
    await apply([event('e1', 'accepted', '2024-12-10T10:00:00Z', { patient_last_name: 'Twin' })]);
    await registerLocalPrescriptions(db, [
      { external_id: 'rx-1', prescription_identity: identity({ patient_last_name: 'Twin' }) },
      { external_id: 'rx-2', prescription_identity: identity({ patient_last_name: 'twin' }) },
    ]);
    expect(await rematch(db)).toEqual({ examined: 1, matched: 0, stillUnmatched: 0, stillAmbiguous: 1 });
    expect(await listQuarantine(db)).toMatchObject([
      { event_id: 'e1', reason: 'ambiguous', detail: '2 local prescriptions match (external_id rx-1, rx-2)' },
    ]);
    // rx-2 re-registered under another identity leaves a single candidate
    await registerLocalPrescriptions(db, [{ external_id: 'rx-2', prescription_identity: identity({ patient_last_name: 'Other' }) }]);
    expect(await listQuarantine(db)).toEqual([]);
    expect((await listLocalPrescriptions(db, { status: 'accepted' })).map((p) => p.external_id)).toEqual(['rx-1']);
  });

  test('rematch never regresses a status', async () => {
    await registerLocalPrescriptions(db, [{ external_id: 'rx-ada', prescription_identity: identity({ erx_message_id: 'ERX-1' }) }]);
    await apply([event('d1', 'delivered', '2024-12-10T11:00:00Z', { erx_message_id: 'ERX-1' })]);
    // an older event under a different erx, then the local record learns nothing new: it stays unmatched
    await apply([event('a1', 'accepted', '2024-12-10T10:00:00Z', { erx_message_id: 'ERX-OTHER' })]);
    expect(await rematch(db)).toMatchObject({ examined: 1, stillUnmatched: 1 });
    await registerLocalPrescriptions(db, [{ external_id: 'rx-ada', prescription_identity: identity({ erx_message_id: 'ERX-OTHER' }) }]);
    const [ada] = await listLocalPrescriptions(db);
    expect(ada).toMatchObject({ status: 'delivered', events: 2 });
  });

  test('re-registering keeps an existing subscription id and counts an update', async () => {
    await registerLocalPrescriptions(db, [{ external_id: 'rx-1', prescription_identity: identity(), subscription_id: 'sub-9' }]);
    const again = await registerLocalPrescriptions(db, [
      { external_id: 'rx-1', prescription_identity: identity() },
      { external_id: 'rx-1', prescription_identity: identity() },
    ]);
    expect(again).toMatchObject({ inserted: 0, updated: 1 });
    expect(await listLocalPrescriptions(db)).toMatchObject([{ external_id: 'rx-1', subscription_id: 'sub-9' }]);
  });

  test('recordSentPrescription stores the identity of a sent prescription so its events match', async () => {
    const request = {
      external_id: 'sent-1',
      written_date: '2024-12-01',
      patient: { first_name: 'Ada', last_name: 'Lovelace', dob: '1990-12-10', address: { state: 'NY' } },
      prescriber: { npi: PRESCRIBER_NPI },
      medication: { ndc: '00002015204' },
    } as unknown as PrescriptionRequest;
    await recordSentPrescription(db, request, { cancellation_requested_at: '2024-12-10T12:00:00Z' }, 'sub-1');
    await apply([event('e1', 'accepted', '2024-12-10T10:00:00Z')]);
    expect(await listLocalPrescriptions(db)).toEqual([
      {
        feed: 'default',
        external_id: 'sent-1',
        status: 'accepted',
        status_occurred_at: '2024-12-10T10:00:00.000Z',
        events: 1,
        cancellation_requested_at: '2024-12-10T12:00:00.000Z',
        subscription_id: 'sub-1',
      },
    ]);
  });
});

describe('rematch at scale: only what changed, in batches', () => {
  /** A prescription inserted behind every rematch's back (a restore, a hand-made row): only a full rematch finds its events. */
  const insertQuietly = (externalId: string, lastName: string) =>
    db.execute(sql`insert into intake_sync.prescriptions (feed, external_id, patient_first_name, patient_last_name, patient_state,
      patient_dob, prescriber_npi, written_date, drug_ndc, identity_key)
      select feed, ${externalId}, 'x', 'x', 'x', 'x', 'x', 'x', 'x', identity_key from intake_sync.events
      where raw->'prescription_identity'->>'patient_last_name' = ${lastName} limit 1`);
  const heldIds = async () =>
    (await queryRows<{ id: string }>(db, sql`select id from intake_sync.events where prescription_id is null order by id`)).map(
      (r) => r.id,
    );

  test('a registration (import, a delivered send) rematches only the identities it registered', async () => {
    await apply([
      event('e-a', 'accepted', '2024-12-10T10:00:00Z', { patient_last_name: 'Alpha' }),
      event('e-b', 'accepted', '2024-12-10T10:00:00Z', { patient_last_name: 'Beta' }),
    ]);
    await insertQuietly('rx-beta', 'Beta');
    const registered = await registerLocalPrescriptions(db, [
      { external_id: 'rx-alpha', prescription_identity: identity({ patient_last_name: 'Alpha' }) },
    ]);
    expect(registered.rematch).toEqual({ examined: 1, matched: 1, stillUnmatched: 0, stillAmbiguous: 0 });
    // Beta's event would match, but nothing registered Beta: it waits for `rematch`
    expect(await heldIds()).toEqual(['e-b']);
  });

  test('rematch walks the held identities in batches, each its own transaction, and reports each batch', async () => {
    const names = ['Alpha', 'Beta', 'Gamma'];
    await apply(
      names.flatMap((n) => [
        event(`${n}-1`, 'accepted', '2024-12-10T10:00:00Z', { patient_last_name: n }),
        event(`${n}-2`, 'ordered', '2024-12-10T11:00:00Z', { patient_last_name: n }),
      ]),
    );
    await insertQuietly('rx-alpha', 'Alpha');
    await insertQuietly('rx-gamma', 'Gamma');
    const preview: string[] = [];
    expect(await previewRematch(db, { batchSize: 1, onMatch: (m) => preview.push(`${m.event_id}>${m.external_id}`) })).toEqual({
      examined: 6,
      matched: 4,
      stillUnmatched: 2,
      stillAmbiguous: 0,
    });
    expect(preview.sort()).toEqual(['Alpha-1>rx-alpha', 'Alpha-2>rx-alpha', 'Gamma-1>rx-gamma', 'Gamma-2>rx-gamma']);
    expect((await heldIds()).length).toBe(6); // the preview wrote nothing

    const batches: RematchBatch[] = [];
    const total = await rematch(db, { batchSize: 1, onBatch: (b) => batches.push(b) });
    expect(total).toEqual({ examined: 6, matched: 4, stillUnmatched: 2, stillAmbiguous: 0 });
    expect(batches.map((b) => [b.batch, b.keys, b.examined])).toEqual([
      [1, 1, 2],
      [2, 1, 2],
      [3, 1, 2],
    ]);
    expect(batches.every((b) => b.lockHeldMs >= 0 && b.lockWaitMs >= 0)).toBe(true);
    expect(await heldIds()).toEqual(['Beta-1', 'Beta-2']);
    expect((await listLocalPrescriptions(db)).map((p) => [p.external_id, p.status])).toEqual([
      ['rx-alpha', 'ordered'],
      ['rx-gamma', 'ordered'],
    ]);
    expect((await listQuarantine(db, { includeResolved: true })).filter((q) => q.resolution === 'matched')).toHaveLength(4);
  });
});

describe('registerLocalPrescriptions and planner statistics', () => {
  const reltuples = async () =>
    Number((await queryRows<{ n: unknown }>(db, sql`select reltuples as n from pg_class where relname = 'prescriptions'`))[0]?.n);

  test('a large registration refreshes the statistics the page statement is planned with', async () => {
    const rows = Array.from({ length: ANALYZE_AFTER_INSERTED + 10 }, (_, i) => ({
      external_id: `bulk-${i}`,
      prescription_identity: identity({ patient_last_name: `Bulk${i}` }),
    }));
    await registerLocalPrescriptions(db, rows.slice(0, 10));
    // a small registration leaves them alone (a fresh table reads as never analyzed: -1, or 0 on older servers)
    expect(await reltuples()).toBeLessThanOrEqual(0);
    await registerLocalPrescriptions(db, rows);
    expect(await reltuples()).toBeGreaterThanOrEqual(ANALYZE_AFTER_INSERTED);
  });
});
