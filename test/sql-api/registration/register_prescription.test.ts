import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { applyPage } from '../../../src/sync/apply/apply-page.js';
import { loadCheckpoint } from '../../../src/sync/poll/checkpoint.js';
import { listLocalPrescriptions } from '../../../src/sync/matching/local-prescriptions.js';
import { markCancellationRequested, setSubscriptionId } from '../../../src/sync/matching/sent-prescriptions.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { event, identity, truncateStore } from '../../support/sync/fixtures.js';
import { waitFor } from '../../support/wait-for.js';
import { plainSql, sqlError, type PlainQuery, type PlainSql } from '../../support/sql-api/plain-sql.js';
import { roleTagStatement } from '../../support/test-run.js';

// register_prescription() and prescription_status as an application uses them: plain SQL on a
// connection of its own, in its own transactions. The worker's side (applyPage) runs as in production.

let tdb: TestDatabase;
let app: PlainSql;
let observer: PlainSql;
const realServer = await postgresReachable();

beforeAll(async () => {
  tdb = await createTestDatabase('sql_api_register');
  app = plainSql(tdb);
  // a second session, to see what others see before and after the application commits
  observer = plainSql(tdb);
});
afterAll(async () => {
  await app.close();
  await observer.close();
  await tdb.drop();
});
beforeEach(async () => {
  await truncateStore(tdb.database.db);
});

const REGISTER = `select * from "intake_sync".register_prescription($1::text, $2::text::jsonb)`;
const register = (query: PlainQuery, externalId: string | null, id: unknown) =>
  query(REGISTER, [externalId, id === undefined ? null : JSON.stringify(id)]);
const statusOf = (query: PlainQuery) =>
  query(`select external_id, status, status_occurred_at::text, events from "intake_sync".prescription_status order by external_id`);
const openFindings = (query: PlainQuery) =>
  query(`select event_id, reason from "intake_sync"."quarantine" where resolved_at is null order by event_id`);

async function applyEvents(events: unknown[]) {
  const { db } = tdb.database;
  const { version } = await loadCheckpoint(db, 'default');
  return applyPage(db, { feed: 'default', expectedVersion: version, nextIterator: `after-v${version}`, events });
}

const ROLLBACK = Symbol('rollback');
const rolledBack = (error: unknown) => {
  if (error !== ROLLBACK) throw error;
};

describe('register_prescription()', () => {
  test('inserts, then updates by external_id, keeping the subscription and the cancellation', async () => {
    expect(await register(app.query, 'rx-1', identity())).toEqual([{ external_id: 'rx-1', inserted: true, rematched: 0, status: null }]);
    await setSubscriptionId(tdb.database.db, 'rx-1', 'sub-9');
    await markCancellationRequested(tdb.database.db, 'rx-1', '2024-12-10T12:00:00Z');
    expect(await register(app.query, ' rx-1 ', identity({ patient_last_name: 'Byron' }))).toEqual([
      { external_id: 'rx-1', inserted: false, rematched: 0, status: null },
    ]);
    expect(
      await app.query(`select patient_last_name, subscription_id, cancellation_requested_at::text from "intake_sync"."prescriptions"`),
    ).toEqual([{ patient_last_name: 'Byron', subscription_id: 'sub-9', cancellation_requested_at: '2024-12-10 12:00:00+00' }]);
  });

  test('a held event moves the status in the registering transaction: rollback leaves it held, commit shows both at once', async () => {
    await applyEvents([event('e1', 'accepted', '2024-12-10T10:00:00Z'), event('e2', 'ordered', '2024-12-10T10:05:00Z')]);
    expect(await openFindings(app.query)).toEqual([
      { event_id: 'e1', reason: 'unmatched' },
      { event_id: 'e2', reason: 'unmatched' },
    ]);

    await app
      .transaction(async (query) => {
        expect(await register(query, 'rx-ada', identity({ patient_first_name: ' ADA ' }))).toEqual([
          { external_id: 'rx-ada', inserted: true, rematched: 2, status: 'ordered' },
        ]);
        expect(await statusOf(query)).toEqual([
          { external_id: 'rx-ada', status: 'ordered', status_occurred_at: '2024-12-10 10:05:00+00', events: 2 },
        ]);
        expect(await openFindings(query)).toEqual([]);
        throw ROLLBACK;
      })
      .catch(rolledBack);
    expect(await statusOf(app.query)).toEqual([]);
    expect(await openFindings(app.query)).toHaveLength(2);

    await app.transaction(async (query) => {
      await register(query, 'rx-ada', identity());
      if (realServer) {
        // another session sees neither the prescription nor the resolved findings yet
        expect(await statusOf(observer.query)).toEqual([]);
        expect(await openFindings(observer.query)).toHaveLength(2);
      }
    });
    expect(await statusOf(observer.query)).toEqual([
      { external_id: 'rx-ada', status: 'ordered', status_occurred_at: '2024-12-10 10:05:00+00', events: 2 },
    ]);
    expect(await openFindings(observer.query)).toEqual([]);
  });

  test('bad input raises naming the field and writes nothing', async () => {
    await applyEvents([event('e1', 'accepted', '2024-12-10T10:00:00Z')]);
    const { patient_last_name: _dropped, ...withoutLastName } = identity();
    expect(await sqlError(register(app.query, 'rx-1', withoutLastName))).toEqual({
      code: '23502',
      message: 'identity.patient_last_name: required',
    });
    expect(await sqlError(register(app.query, 'rx-1', identity({ prescriber_npi: '1234567890' })))).toEqual({
      code: '22023',
      message: 'identity.prescriber_npi: must be a 10-digit NPI with a valid check digit',
    });
    expect(await sqlError(register(app.query, null, identity()))).toEqual({ code: '23502', message: 'external_id: required' });
    expect(await statusOf(app.query)).toEqual([]);
    expect(await openFindings(app.query)).toEqual([{ event_id: 'e1', reason: 'unmatched' }]);
  });

  test('a vendor transaction that registers and rolls back leaves nothing, and releases the match lock', async () => {
    const table = `vendor_rx_${randomBytes(3).toString('hex')}`;
    await app.query(`create table public.${table} (id text primary key)`);
    await applyEvents([event('e1', 'accepted', '2024-12-10T10:00:00Z')]);
    await app
      .transaction(async (query) => {
        await query(`insert into public.${table} values ('fax-1')`);
        await register(query, 'fax-1', identity());
        throw ROLLBACK;
      })
      .catch(rolledBack);
    expect(await app.query(`select * from public.${table}`)).toEqual([]);
    expect(await statusOf(app.query)).toEqual([]);
    expect(await openFindings(app.query)).toEqual([{ event_id: 'e1', reason: 'unmatched' }]);
    // a page still applies: nothing holds the lock
    await applyEvents([event('e2', 'ordered', '2024-12-10T10:05:00Z')]);
    expect(await openFindings(app.query)).toHaveLength(2);
  });

  test.each(['repeatable read', 'serializable'])('refuses a %s transaction and writes nothing', async (level) => {
    const error = await sqlError(
      app.transaction(async (query) => {
        await query(`set transaction isolation level ${level}`);
        await register(query, 'rx-1', identity());
      }),
    );
    expect(error.code).toBe('25000');
    expect(error.message).toBe(`register_prescription: needs a READ COMMITTED transaction, not ${level.toUpperCase()}`);
    expect(await statusOf(app.query)).toEqual([]);
  });

  test('moving a prescription to another identity settles the ambiguity it caused', async () => {
    await register(app.query, 'rx-1', identity({ patient_last_name: 'Twin' }));
    await register(app.query, 'rx-2', identity({ patient_last_name: 'twin' }));
    await applyEvents([event('e1', 'accepted', '2024-12-10T10:00:00Z', { patient_last_name: 'Twin' })]);
    expect(await openFindings(app.query)).toEqual([{ event_id: 'e1', reason: 'ambiguous' }]);
    // its old identity key is rematched too: rx-1 is left as the only candidate
    expect(await register(app.query, 'rx-2', identity({ patient_last_name: 'Other' }))).toEqual([
      { external_id: 'rx-2', inserted: false, rematched: 1, status: null },
    ]);
    expect((await statusOf(app.query)).map((row) => [row.external_id, row.status])).toEqual([
      ['rx-1', 'accepted'],
      ['rx-2', null],
    ]);
  });

  test('an eRx id decides over the identity fields', async () => {
    await applyEvents([event('e1', 'accepted', '2024-12-10T10:00:00Z', { patient_last_name: 'Typo', erx_message_id: 'ERX-7' })]);
    expect(await register(app.query, 'rx-1', identity({ erx_message_id: ' ERX-7 ' }))).toEqual([
      { external_id: 'rx-1', inserted: true, rematched: 1, status: 'accepted' },
    ]);
  });
});

describe('prescription_status', () => {
  test('counts distinct applied events, and is what listLocalPrescriptions() returns', async () => {
    await register(app.query, 'rx-1', identity());
    await register(app.query, 'rx-2', identity({ patient_last_name: 'Byron' }));
    const page = [
      event('e1', 'accepted', '2024-12-10T10:00:00Z'),
      event('e2', 'dispensed', '2024-12-10T10:10:00Z'),
      event('e3', 'ordered', '2024-12-10T10:05:00Z'),
    ];
    await applyEvents(page);
    await applyEvents(page);
    const rows = await app.query(
      `select external_id, status, status_occurred_at, cancellation_requested_at, events, updated_at, subscription_id
       from "intake_sync".prescription_status order by external_id`,
    );
    expect(rows.map((r) => [r.external_id, r.status, r.events])).toEqual([
      ['rx-1', 'dispensed', 3],
      ['rx-2', null, 0],
    ]);
    const listed = await listLocalPrescriptions(tdb.database.db);
    expect(listed.map((p) => [p.external_id, p.status, p.status_occurred_at, p.events])).toEqual(
      rows.map((r) => [
        r.external_id,
        r.status,
        r.status_occurred_at ? new Date(r.status_occurred_at as string).toISOString() : null,
        r.events,
      ]),
    );
  });
});

describe.skipIf(!realServer)(`with other sessions (${NEEDS_POSTGRES})`, () => {
  test('a page applied while a registration is uncommitted waits for it and matches the registered prescription', async () => {
    let page: ReturnType<typeof applyEvents> | undefined;
    await app.transaction(async (query) => {
      await register(query, 'rx-1', identity());
      page = applyEvents([event('e1', 'accepted', '2024-12-10T10:00:00Z')]);
      // the page's session waits on the match lock this transaction holds
      await waitFor(
        async () => {
          const [waiting] = await observer.query<{ n: number }>(
            `select count(*)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid where l.locktype = 'transactionid' and not l.granted and a.datname = current_database()`,
          );
          return waiting?.n === 1;
        },
        { timeoutMs: 20_000, what: 'the page to wait on the registration', intervalMs: 10 },
      );
    });
    expect(await page).toMatchObject({ matched: 1, quarantined: { unmatched: 0 } });
    expect(await statusOf(app.query)).toEqual([
      { external_id: 'rx-1', status: 'accepted', status_occurred_at: '2024-12-10 10:00:00+00', events: 1 },
    ]);
  });

  test('an application role needs EXECUTE on the function and SELECT on the view, not the tables', async () => {
    const role = `intake_app_${randomBytes(4).toString('hex')}`;
    await app.query(`create role ${role} login`);
    await app.query(roleTagStatement(role));
    try {
      await app.query(`grant usage on schema "intake_sync" to ${role}`);
      await app.query(`grant execute on function "intake_sync".register_prescription(text, jsonb, text) to ${role}`);
      await app.query(`grant select on "intake_sync".prescription_status to ${role}`);
      const url = new URL(tdb.url as string);
      url.username = role;
      const asApp = plainSql({ ...tdb, url: url.toString() });
      try {
        expect(await register(asApp.query, 'rx-1', identity())).toMatchObject([{ external_id: 'rx-1', inserted: true }]);
        expect(await statusOf(asApp.query)).toMatchObject([{ external_id: 'rx-1' }]);
        expect((await sqlError(asApp.query(`select * from "intake_sync"."prescriptions"`))).code).toBe('42501');
        expect((await sqlError(asApp.query(`select * from "intake_sync".rematch_held()`))).code).toBe('42501');
        expect((await sqlError(asApp.query(`select "intake_sync".identity_key('{}')`))).code).toBe('42501');
      } finally {
        await asApp.close();
      }
    } finally {
      await app.query(`drop owned by ${role}`);
      await app.query(`drop role ${role}`);
    }
  });
});
