import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { queryRows } from '../../src/db/connection.js';
import { prescriptions } from '../../src/db/schema.js';
import { matchPageSql } from '../../src/sync/apply-page-sql.js';
import { decideMatch, matchEvent, type EventIdentity, type LocalIdentity, type MatchOutcome } from '../../src/sync/match.js';
import { candidateIds } from '../../src/sync/match-sql.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { truncateStore } from './fixtures.js';

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
  ['erx decides even when the key matches another', { key: K, erx: 'E1' }, [local(1, K, 'E1'), local(2, K, null)], { kind: 'matched', id: 1 }],
  ['two locals with the erx', { key: OTHER, erx: 'E1' }, [local(1, K, 'E1'), local(2, OTHER, 'E1')], { kind: 'ambiguous', ids: [1, 2] }],
  ['no erx match: key with a null-erx local', { key: K, erx: 'E1' }, [local(1, K, null)], { kind: 'matched', id: 1 }],
  ['no erx match: a different erx is excluded', { key: K, erx: 'E1' }, [local(1, K, 'E2')], { kind: 'unmatched' }],
  ['no erx match: only the null-erx local counts', { key: K, erx: 'E1' }, [local(1, K, 'E2'), local(2, K, null)], { kind: 'matched', id: 2 }],
  ['event without erx matches a local that has one', { key: K, erx: null }, [local(1, K, 'E2')], { kind: 'matched', id: 1 }],
  ['event without erx: key ambiguity across erx', { key: K, erx: null }, [local(1, K, 'E2'), local(2, K, 'E3')], { kind: 'ambiguous', ids: [1, 2] }],
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

describe('matchPageSql (the SQL path of the same rule)', () => {
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
    for (const l of locals) {
      await db.insert(prescriptions).values({
        id: l.id,
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
    const json = JSON.stringify([{ id: 'ev-1', identity_key: event.key, erx_message_id: event.erx }]);
    const rows = await queryRows<{ id: string; ids: string[] | null }>(db, matchPageSql(json));
    expect(rows).toHaveLength(1);
    expect(decideMatch(candidateIds(rows[0]?.ids))).toEqual(expected);
  });

  test('matching uses index lookups, not a scan of the local prescriptions', async () => {
    const json = JSON.stringify([{ id: 'ev-1', identity_key: K, erx_message_id: 'E1' }]);
    // tiny tables make a scan cheapest; disabling it proves a usable index exists for every branch
    const plan = await tdb.database.db.transaction(async (tx) => {
      await tx.execute(sql`set local enable_seqscan = off`);
      return queryRows<Record<string, string>>(tx, sql`explain ${matchPageSql(json)}`);
    });
    const text = plan.map((row) => Object.values(row)[0]).join('\n');
    expect(text).toContain('prescriptions_identity_key_idx');
    expect(text).toContain('prescriptions_erx_message_id_idx');
    expect(text).not.toMatch(/Seq Scan on prescriptions/);
  });
});
