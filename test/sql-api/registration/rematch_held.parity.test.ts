import { PgDialect } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createPrng, randomIndex, type Random } from '../../../src/sandbox/prng.js';
import { identityKey } from '../../../src/sync/matching/identity-key.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { identity, truncateStore } from '../../support/sync/fixtures.js';
import { plainSql, type PlainQuery, type PlainSql } from '../../support/sql-api/plain-sql.js';
import { referenceRematchSql } from '../../support/sql-api/reference-rematch.js';

// rematch_held() replaced the TypeScript rematch statement. The same quarantine state, rematched
// by the old statement (frozen in test/support/sql-api/reference-rematch.ts) and by the function, must end in
// the same rows; and a registration's targeted rematch must leave nothing a full one would change.

let tdb: TestDatabase;
let db: PlainSql;
let referenceText: string;

beforeAll(async () => {
  tdb = await createTestDatabase('sql_api_rematch_parity');
  db = plainSql(tdb);
  referenceText = new PgDialect().sqlToQuery(referenceRematchSql(tdb.database.names)).sql;
});
afterAll(async () => {
  await db.close();
  await tdb.drop();
});

const NAMES: Array<[string, number | null]> = [
  ['accepted', 1],
  ['ordered', 2],
  ['dispensed', 3],
  ['delivered', 4],
  ['refilled', null],
];
const pick = <T>(random: Random, items: readonly T[]): T => items[randomIndex(random, items.length)] as T;

interface Local {
  externalId: string;
  key: string;
  erx: string | null;
}

/** A store with local prescriptions, linked events and held events (open, resolved, ambiguous, malformed findings). */
async function seed(random: Random, keys: readonly string[], erxIds: readonly (string | null)[]): Promise<Local[]> {
  await truncateStore(tdb.database.db);
  const locals: Local[] = Array.from({ length: 3 + randomIndex(random, 10) }, (_, i) => ({
    externalId: `rx-${i}`,
    key: pick(random, keys),
    erx: pick(random, erxIds),
  }));
  for (const local of locals) {
    const [status, rank] = pick(random, NAMES.slice(0, 4));
    const withStatus = random() < 0.4;
    await db.query(
      `insert into "intake_sync"."prescriptions" (external_id, patient_first_name, patient_last_name, patient_state, patient_dob, prescriber_npi,
         written_date, drug_ndc, identity_key, erx_message_id, status, status_rank, status_occurred_at)
       values ($1, 'x', 'x', 'x', 'x', 'x', 'x', 'x', $2, $3, $4, $5, $6)`,
      [
        local.externalId,
        local.key,
        local.erx,
        withStatus ? status : null,
        withStatus ? rank : 0,
        withStatus ? '2024-12-10T09:00:00Z' : null,
      ],
    );
  }
  const events = 5 + randomIndex(random, 40);
  for (let i = 0; i < events; i++) {
    const [name, rank] = pick(random, NAMES);
    // few distinct times, so ties on occurred_at reach the event-id tie-break
    const occurredAt = `2024-12-10T1${randomIndex(random, 3)}:00:00Z`;
    const linked = random() < 0.2 ? (locals.length > 0 ? 1 + randomIndex(random, locals.length) : null) : null;
    const id = `ev-${String(i).padStart(3, '0')}`;
    await db.query(
      `insert into "intake_sync"."events" (id, feed, name, occurred_at, subscription_id, api_version, raw, identity_key, erx_message_id, status_rank, prescription_id)
       values ($1, 'default', $2, $3, 'sub-1', '2024-12-10', '{}', $4, $5, $6, $7)`,
      [id, name, occurredAt, pick(random, keys), pick(random, erxIds), rank, linked],
    );
    if (linked !== null && random() < 0.7) continue;
    const reason = pick(random, ['unmatched', 'unmatched', 'ambiguous', 'malformed']);
    const resolved = random() < 0.15 ? '2024-12-10T12:00:00Z' : null;
    await db.query(
      `insert into "intake_sync"."quarantine" (quarantine_key, event_id, feed, reason, detail, raw, resolved_at) values ($1, $1, 'default', $2, 'as found', '{}', $3)`,
      [id, reason, resolved],
    );
  }
  return locals;
}

/** Every column a rematch may write; timestamps as "written by this transaction". */
async function snapshot(query: PlainQuery): Promise<Record<string, unknown[]>> {
  return {
    // by external_id: a prescription inserted in a rolled-back transaction burns its id
    events: await query(
      `select e.id, p.external_id as prescription from "intake_sync"."events" e
       left join "intake_sync"."prescriptions" p on p.id = e.prescription_id order by e.id`,
    ),
    prescriptions: await query(
      `select external_id, status, status_rank, status_occurred_at, status_event_id, updated_at = now() as touched
       from "intake_sync"."prescriptions" order by external_id`,
    ),
    quarantine: await query(
      `select quarantine_key, reason, detail, resolved_at is not null as resolved, resolved_at = now() as resolved_now
       from "intake_sync"."quarantine" order by quarantine_key`,
    ),
  };
}

const ROLLBACK = Symbol('rollback');

/** Runs `work` in a transaction, snapshots the store and rolls everything back. */
async function tryOut(work: (query: PlainQuery) => Promise<unknown>): Promise<{ result: unknown; rows: Record<string, unknown[]> }> {
  let outcome: { result: unknown; rows: Record<string, unknown[]> } | undefined;
  await db
    .transaction(async (query) => {
      const result = await work(query);
      outcome = { result, rows: await snapshot(query) };
      throw ROLLBACK;
    })
    .catch((error: unknown) => {
      if (error !== ROLLBACK) throw error;
    });
  if (!outcome) throw new Error('tryOut: no outcome');
  return outcome;
}

describe('rematch_held() and the old TypeScript statement', () => {
  test.each(Array.from({ length: 30 }, (_, seed) => seed))('random store %i ends in the same rows', async (seedValue) => {
    const random = createPrng(seedValue);
    await seed(random, ['k1', 'k2', 'k3', 'k4', 'k5', 'k6'], [null, null, null, 'E1', 'E2', 'E3', 'E4']);
    const reference = await tryOut(async (query) => {
      const [row] = await query<Record<string, number>>(referenceText);
      return {
        examined: row?.examined,
        matched: row?.matched,
        still_unmatched: row?.still_unmatched,
        still_ambiguous: row?.still_ambiguous,
      };
    });
    const fn = await tryOut(async (query) => (await query(`select * from "intake_sync".rematch_held()`))[0]);
    expect(fn).toEqual(reference);
  });
});

describe("a registration's targeted rematch", () => {
  const lastNames = ['Avery', 'Brook', 'Cole', 'Drake'];
  const keyOf = (lastName: string) => identityKey(identity({ patient_last_name: lastName }));

  test.each(Array.from({ length: 30 }, (_, seed) => seed))(
    'random store %i: a full rematch afterwards changes nothing',
    async (seedValue) => {
      const random = createPrng(1000 + seedValue);
      const locals = await seed(random, lastNames.map(keyOf), [null, null, 'E1', 'E2', 'E3']);
      // the held set as the worker keeps it: consistent with the local prescriptions
      await db.query(`select * from "intake_sync".rematch_held()`);
      const externalId = random() < 0.7 && locals.length > 0 ? pick(random, locals).externalId : 'rx-new';
      const registration = [
        externalId,
        JSON.stringify(identity({ patient_last_name: pick(random, lastNames), erx_message_id: pick(random, [null, 'E1', 'E2', 'E4']) })),
      ];
      const register = (query: PlainQuery) =>
        query(`select * from "intake_sync".register_prescription($1::text, $2::text::jsonb)`, registration);
      const targeted = await tryOut(register);
      const full = await tryOut(async (query) => {
        const result = await register(query);
        await query(`select * from "intake_sync".rematch_held()`);
        return result;
      });
      expect(targeted).toEqual(full);
    },
  );
});
