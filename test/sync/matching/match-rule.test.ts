import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { queryRows, type Db } from '../../../src/db/connection.js';
import { prescriptions } from '../../../src/db/schema/events.js';
import { applyPage } from '../../../src/sync/apply/apply-page.js';
import { loadCheckpoint } from '../../../src/sync/poll/checkpoint.js';
import { decideMatch, matchEvent, type EventIdentity, type LocalIdentity, type MatchOutcome } from '../../support/sync/match-rule.js';
import { matchCandidatesLateral } from '../../../src/sync/matching/match-sql.js';
import { pageRowsJson } from '../../../src/sync/apply/page-rows-json.js';
import type { PreparedEvent, PreparedPage } from '../../../src/sync/apply/prepare-page.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { truncateStore } from '../../support/sync/fixtures.js';

const K = 'key-a';
const OTHER = 'key-b';
const local = (id: number, key: string, erx: string | null = null): LocalIdentity => ({ id, key, erx });

/** One table for both paths: the pure rule and the SQL page-apply uses. */
const CASES: Array<[string, EventIdentity, LocalIdentity[], MatchOutcome]> = [
  ['no locals', { key: K, erx: null }, [], { kind: 'unmatched' }],
  ['one local with the key', { key: K, erx: null }, [local(1, K)], { kind: 'matched', id: 1 }],
  ['key differs', { key: K, erx: null }, [local(1, OTHER)], { kind: 'unmatched' }],
  ['two locals with the key', { key: K, erx: null }, [local(1, K), local(2, K)], { kind: 'ambiguous', ids: [1, 2] }],
  ['erx decides over the key', { key: K, erx: 'E1' }, [local(1, OTHER, 'E1'), local(2, K)], { kind: 'matched', id: 1 }],
  [
    'erx decides even when the key matches another',
    { key: K, erx: 'E1' },
    [local(1, K, 'E1'), local(2, K, null)],
    { kind: 'matched', id: 1 },
  ],
  ['two locals with the erx', { key: OTHER, erx: 'E1' }, [local(1, K, 'E1'), local(2, OTHER, 'E1')], { kind: 'ambiguous', ids: [1, 2] }],
  ['no erx match: key with a null-erx local', { key: K, erx: 'E1' }, [local(1, K, null)], { kind: 'matched', id: 1 }],
  ['no erx match: a different erx is excluded', { key: K, erx: 'E1' }, [local(1, K, 'E2')], { kind: 'unmatched' }],
  [
    'no erx match: only the null-erx local counts',
    { key: K, erx: 'E1' },
    [local(1, K, 'E2'), local(2, K, null)],
    { kind: 'matched', id: 2 },
  ],
  ['event without erx matches a local that has one', { key: K, erx: null }, [local(1, K, 'E2')], { kind: 'matched', id: 1 }],
  [
    'event without erx: key ambiguity across erx',
    { key: K, erx: null },
    [local(1, K, 'E2'), local(2, K, 'E3')],
    { kind: 'ambiguous', ids: [1, 2] },
  ],
  ['erx on the local only for a different key', { key: K, erx: 'E1' }, [local(1, OTHER, 'E9')], { kind: 'unmatched' }],
];

describe('matchEvent (pure)', () => {
  test.each(CASES)('%s', (_label, event, locals, expected) => {
    expect(matchEvent(event, locals)).toEqual(expected);
  });

  test('decideMatch ignores repeated ids and sorts', () => {
    expect(decideMatch([3, 1, 3])).toEqual({ kind: 'ambiguous', ids: [1, 3] });
    expect(decideMatch([2, 2])).toEqual({ kind: 'matched', id: 2 });
  });
});

/** One event with the given identity, as preparePage() would hand it to applyPage(). */
function preparedPage(identity: EventIdentity): PreparedPage {
  const raw = {
    id: 'ev-1',
    name: 'accepted',
    occurred_at: '2024-12-10T10:00:00Z',
    api_version: '2024-12-10',
    subscription_id: 'sub-1',
    payload: {},
  };
  const ev: PreparedEvent = {
    id: raw.id,
    name: raw.name,
    occurredAt: '2024-12-10T10:00:00.000Z',
    subscriptionId: raw.subscription_id,
    apiVersion: raw.api_version,
    key: identity.key,
    erx: identity.erx,
    rank: 1,
    hold: null,
    holdDetail: null,
    rawJson: JSON.stringify(raw),
  };
  return { events: [ev], malformed: [], duplicatesInPage: 0, rowsJson: pageRowsJson({ events: [ev], malformed: [] }), prepareMs: 0 };
}

/** What the page statement decided for ev-1, read back as a MatchOutcome (ambiguous ids from the finding's external ids). */
async function storedOutcome(db: Db): Promise<{ outcome: MatchOutcome; detail: string | null }> {
  const [row] = await queryRows<{ prescription_id: string | null; reason: string | null; detail: string | null }>(
    db,
    sql`select e.prescription_id::text, q.reason, q.detail from intake_sync.events e left join intake_sync.quarantine q on q.event_id = e.id where e.id = 'ev-1'`,
  );
  if (row?.prescription_id) return { outcome: { kind: 'matched', id: Number(row.prescription_id) }, detail: null };
  if (row?.reason === 'unmatched') return { outcome: { kind: 'unmatched' }, detail: row.detail };
  const ids = [...(row?.detail ?? '').matchAll(/ext-(\d+)/g)].map((m) => Number(m[1]));
  return { outcome: { kind: 'ambiguous', ids }, detail: row?.detail ?? null };
}

/** The finding text of an outcome, as applyPage and rematch word it. */
function expectedDetail(outcome: MatchOutcome): string | null {
  if (outcome.kind === 'matched') return null;
  if (outcome.kind === 'unmatched') return 'no local prescription matches its identity';
  return `${outcome.ids.length} local prescriptions match (external_id ${outcome.ids.map((id) => `ext-${id}`).join(', ')})`;
}

async function insertLocals(db: Db, locals: readonly LocalIdentity[], feed = 'default'): Promise<void> {
  for (const l of locals) {
    await db.insert(prescriptions).values({
      id: l.id,
      feed,
      externalId: `ext-${l.id}`,
      patientFirstName: 'x',
      patientLastName: 'x',
      patientState: 'x',
      patientDob: 'x',
      prescriberNpi: 'x',
      writtenDate: 'x',
      drugNdc: 'x',
      erxMessageId: l.erx,
      identityKey: l.key,
    });
  }
}

describe('applyPage matching (the SQL path of the same rule)', () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase('sync_match');
  });
  afterAll(async () => {
    await tdb.drop();
  });

  test.each(CASES)('%s', async (_label, event, locals, expected) => {
    const { db } = tdb.database;
    await truncateStore(db);
    await insertLocals(db, locals);
    const { version } = await loadCheckpoint(db, 'default');
    await applyPage(db, { feed: 'default', expectedVersion: version, nextIterator: 'it-1', events: [{}], prepared: preparedPage(event) });
    const stored = await storedOutcome(db);
    expect(stored.outcome).toEqual(expected);
    expect(stored.detail).toBe(expectedDetail(expected));
  });

  // an event of feed A never matches a prescription of feed B: the same table, the locals in another feed
  test.each(CASES)("another feed's locals never match: %s", async (_label, event, locals) => {
    const { db } = tdb.database;
    await truncateStore(db);
    await insertLocals(db, locals, 'other');
    const { version } = await loadCheckpoint(db, 'default');
    await applyPage(db, { feed: 'default', expectedVersion: version, nextIterator: 'it-1', events: [{}], prepared: preparedPage(event) });
    const stored = await storedOutcome(db);
    expect(stored.outcome).toEqual({ kind: 'unmatched' });
  });

  test('an ambiguous finding names at most five external ids', async () => {
    const { db } = tdb.database;
    await truncateStore(db);
    await insertLocals(
      db,
      [1, 2, 3, 4, 5, 6, 7].map((id) => local(id, K)),
    );
    const { version } = await loadCheckpoint(db, 'default');
    await applyPage(db, {
      feed: 'default',
      expectedVersion: version,
      nextIterator: 'it-1',
      events: [{}],
      prepared: preparedPage({ key: K, erx: null }),
    });
    expect((await storedOutcome(db)).detail).toBe('7 local prescriptions match (external_id ext-1, ext-2, ext-3, ext-4, ext-5, ...)');
  });

  test('matching uses index lookups, not a scan of the local prescriptions', async () => {
    const { db } = tdb.database;
    await truncateStore(db);
    // two feeds of 2,000 prescriptions each, statistics fresh: an index that only narrows by feed costs a scan of half the table
    await db.execute(sql`insert into intake_sync.prescriptions (feed, external_id, patient_first_name, patient_last_name, patient_state,
      patient_dob, prescriber_npi, written_date, drug_ndc, erx_message_id, identity_key)
      select case when g % 2 = 0 then 'default' else 'other' end, 'f-' || g, 'x', 'x', 'x', 'x', 'x', 'x', 'x', 'erx-' || g, 'key-' || g
      from generate_series(1, 4000) g`);
    await db.execute(sql`analyze intake_sync.prescriptions`);
    const json = JSON.stringify([{ id: 'ev-1', identity_key: K, erx_message_id: 'E1', subscription_id: 'sub-1' }]);
    const matchOnly = sql`select ev.id, m.prescription_id from json_to_recordset(${json}::json) as ev(id text, identity_key text, erx_message_id text, subscription_id text)
      ${matchCandidatesLateral(tdb.database.names, sql`'default'::text`)}`;
    // tiny tables make a scan cheapest; disabling it proves a usable index exists for every branch
    const plan = await tdb.database.db.transaction(async (tx) => {
      await tx.execute(sql`set local enable_seqscan = off`);
      return queryRows<Record<string, string>>(tx, sql`explain ${matchOnly}`);
    });
    const text = plan.map((row) => Object.values(row)[0]).join('\n');
    expect(text).toMatch(/prescriptions_feed_identity_key_idx[^\n]*\n\s*Index Cond: \(\(feed = 'default'::text\) AND \(identity_key = /);
    expect(text).toMatch(
      /prescriptions_feed_erx_message_id_idx[^\n]*\n\s*Index Cond: \(\(feed = 'default'::text\) AND \(erx_message_id = /,
    );
    expect(text).not.toMatch(/Seq Scan on prescriptions/);
  });
});
