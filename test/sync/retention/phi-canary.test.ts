import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { queryRows, type Db } from '../../../src/db/connection.js';
import { samplePrescription } from '../../../src/sandbox/fixtures.js';
import { applyPage } from '../../../src/sync/apply/apply-page.js';
import { registerLocalPrescriptions } from '../../../src/sync/matching/local-prescriptions.js';
import { loadCheckpoint } from '../../../src/sync/poll/checkpoint.js';
import { RETENTION_CLASSES } from '../../../src/sync/retention/retention-classes.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { event, identity } from '../../support/sync/fixtures.js';
import { passAt, policy } from '../../support/sync/retention.js';

// The PHI canary of issue 18: after a purge with every retention at its minimum (1 s), no patient
// name, date of birth, phone, email or address of the test data is anywhere in the schema's data
// except the prescriptions registry's rows still in progress (the vendor's own record, needed for
// matching; one that ended loses its identity, issue 25). Every table's
// rows are scanned as text, so a column added later without retention fails here.

const FEED = 'default';
const CANARIES = [
  'Canaryfirst',
  'Canarylast',
  'Orphanfirst',
  'Brokenfirst',
  '1931-07-04',
  '1932-02-29',
  '555-777-1234',
  'canary@example.org',
  '77 Canary Lane',
];

let tdb: TestDatabase;
let db: Db;
const run = (text: string) => queryRows<Record<string, unknown>>(db, sql.raw(text));

beforeAll(async () => {
  tdb = await createTestDatabase('retention_phi_canary');
  db = tdb.database.db;
});
afterAll(async () => {
  await tdb.drop();
});

/** Every canary found in each table but prescriptions: table -> canaries. */
async function scan(): Promise<Record<string, string[]>> {
  const tables = await run(`select tablename from pg_tables where schemaname = 'intake_sync' and tablename <> 'prescriptions' order by 1`);
  const found: Record<string, string[]> = {};
  for (const { tablename } of tables) {
    const rows = await run(`select t::text as row from intake_sync."${String(tablename)}" t`);
    const text = rows
      .map((r) => String(r.row))
      .join('\n')
      .toLowerCase();
    const hits = CANARIES.filter((c) => text.includes(c.toLowerCase()));
    if (hits.length > 0) found[String(tablename)] = hits;
  }
  return found;
}

test('after a purge with every retention at 1 s, PHI is left only in the prescriptions registry', async () => {
  const patient = identity({ patient_first_name: 'Canaryfirst', patient_last_name: 'Canarylast', patient_dob: '1931-07-04' });
  await registerLocalPrescriptions(db, [{ external_id: 'rx-canary', prescription_identity: patient }]);
  const { version } = await loadCheckpoint(db, FEED);
  const canaryEvent = (id: string, name: string) => event(id, name, '2024-12-10T10:00:00Z', patient);
  await applyPage(db, {
    feed: FEED,
    expectedVersion: version,
    nextIterator: 'it-1',
    events: [
      canaryEvent('c1', 'accepted'),
      canaryEvent('c2', 'ordered'),
      canaryEvent('c3', 'delivered'),
      // unmatched: nobody registered this patient
      event('o1', 'accepted', '2024-12-10T10:00:00Z', { patient_first_name: 'Orphanfirst', patient_dob: '1932-02-29' }),
      // malformed (no occurred_at), still carrying an identity
      { id: 'm1', name: 'accepted', prescription_identity: identity({ patient_first_name: 'Brokenfirst' }), subscription_id: 'sub-1' },
    ],
  });
  // an ambiguous finding: two registered prescriptions with one identity
  const twin = identity({
    patient_first_name: 'Canaryfirst',
    patient_last_name: 'Canarylast',
    patient_dob: '1931-07-04',
    drug_ndc: '00002015205',
  });
  await registerLocalPrescriptions(db, [
    { external_id: 'rx-twin-a', prescription_identity: twin },
    { external_id: 'rx-twin-b', prescription_identity: twin },
  ]);
  await applyPage(db, {
    feed: FEED,
    expectedVersion: version + 1,
    nextIterator: 'it-2',
    events: [event('a1', 'accepted', '2024-12-10T11:00:00Z', twin)],
  });
  // the whole prescription sent through the outbox, delivered
  const sent = samplePrescription(1, { prefix: 'canary' });
  sent.patient = {
    ...sent.patient,
    first_name: 'Canaryfirst',
    last_name: 'Canarylast',
    dob: '1931-07-04',
    primary_phone: '555-777-1234',
    email: 'canary@example.org',
    address: { ...sent.patient.address, address1: '77 Canary Lane' },
  };
  await run(`select intake_sync.send_prescription('${JSON.stringify(sent).replaceAll("'", "''")}'::jsonb, 'default')`);
  await run(`update intake_sync.outbox set state = 'delivered', completed_at = now()`);

  const before = await scan();
  expect(Object.keys(before).sort()).toEqual(['events', 'outbox', 'quarantine']);
  expect(before.quarantine).toEqual(expect.arrayContaining(['Orphanfirst', 'Brokenfirst', 'Canaryfirst']));

  const minimum = policy(Object.fromEntries(RETENTION_CLASSES.map((c) => [c, 1_000])));
  const result = await passAt(tdb, db, FEED, minimum, Date.now() + 60_000, 1_000);
  expect(result.complete).toBe(true);
  expect(await scan()).toEqual({});
  // the registry keeps its record of prescriptions in progress (the twins); the delivered one lost its
  // identity (RETAIN_TERMINAL_IDENTITIES) and keeps its external_id and status
  expect(await run(`select count(*)::int as n from intake_sync.prescriptions where patient_first_name = 'Canaryfirst'`)).toEqual([
    { n: 2 },
  ]);
  expect(result.counts.terminal_identities).toBe(1);
  const [ended] = await run(`select p::text as row, status from intake_sync.prescriptions p where external_id = 'rx-canary'`);
  expect(ended?.status).toBe('delivered');
  expect(CANARIES.filter((c) => String(ended?.row).toLowerCase().includes(c.toLowerCase()))).toEqual([]);
});
