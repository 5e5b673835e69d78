import { sql } from 'drizzle-orm';
import { sendStatusWakeup } from '../../../src/db/status-wakeup.js';
import postgres from 'postgres';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { queryRows, type Db } from '../../../src/db/connection.js';
import { namesOf } from '../../../src/db/store-names.js';
import { applyPage } from '../../../src/sync/apply/apply-page.js';
import { applyPageSql, matchLockSharedSql } from '../../../src/sync/apply/page-statement.js';
import { loadCheckpoint } from '../../../src/sync/poll/checkpoint.js';
import { registerLocalPrescriptions } from '../../../src/sync/matching/local-prescriptions.js';
import { inTransaction } from '../../../src/db/page-transaction.js';
import { preparePage } from '../../../src/sync/apply/prepare-page.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { waitFor } from '../../support/wait-for.js';
import { event, identity, truncateStore } from '../../support/sync/fixtures.js';

const FEED = 'default';
const onPostgres = await postgresReachable();
let tdb: TestDatabase;
let db: Db;

interface ChangeRow extends Record<string, unknown> {
  cursor: string;
  external_id: string;
  previous_status: string | null;
  new_status: string;
  event_id: string | null;
}

beforeAll(async () => {
  tdb = await createTestDatabase('sql_api_changes');
  db = tdb.database.db;
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  await truncateStore(db);
});

const since = (cursor: string | null, maxRows = 1000) =>
  queryRows<ChangeRow>(db, sql`select * from intake_sync.status_changes_since(${cursor}::text, ${maxRows}::int)`);

async function insertPrescriptions(count: number): Promise<void> {
  await db.execute(sql`insert into intake_sync.prescriptions (external_id, patient_first_name, patient_last_name, patient_state,
      patient_dob, prescriber_npi, written_date, drug_ndc, identity_key)
    select 'rx-' || g, 'First', 'Last', 'NY', '1990-01-01', '1234567893', '2024-12-01', '00002015204', 'key-' || g
    from generate_series(1, ${count}::int) g`);
}

async function applyNext(events: unknown[]) {
  const { version } = await loadCheckpoint(db, FEED);
  return applyPage(db, { feed: FEED, expectedVersion: version, nextIterator: `after-v${version}`, events });
}

describe('status_changes_since from plain SQL', () => {
  test('one row per changed prescription, in commit order, each with a cursor to resume after it', async () => {
    await insertPrescriptions(3);
    await db.execute(sql`update intake_sync.prescriptions set status = 'accepted', status_event_id = 'ev-' || id where id <= 2`);
    // a statement that touches rows without changing their status appends nothing
    await db.execute(sql`update intake_sync.prescriptions set updated_at = now()`);
    await db.execute(sql`update intake_sync.prescriptions set status = 'ordered' where id = 1`);

    const all = await since(null);
    expect(all.map((r) => [r.external_id, r.previous_status, r.new_status, r.event_id])).toEqual([
      ['rx-1', null, 'accepted', 'ev-1'],
      ['rx-2', null, 'accepted', 'ev-2'],
      ['rx-1', 'accepted', 'ordered', 'ev-1'],
    ]);
    expect(new Set(all.map((r) => r.cursor)).size).toBe(3);
    // paging with max_rows and the returned cursors walks the same rows, none twice
    const first = await since(null, 2);
    const rest = await since(first[1]!.cursor, 2);
    expect([...first, ...rest].map((r) => r.cursor)).toEqual(all.map((r) => r.cursor));
    expect(await since(all[2]!.cursor)).toEqual([]);
  });

  test('a rolled-back transaction leaves no change; a transaction at REPEATABLE READ commits while others commit changes', async () => {
    await insertPrescriptions(2);
    await expect(
      db.transaction(async (tx) => {
        await tx.execute(sql`update intake_sync.prescriptions set status = 'accepted' where id = 1`);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await since(null)).toEqual([]);
    expect(await queryRows(db, sql`select * from intake_sync.change_commits`)).toEqual([]);

    if (!onPostgres) return;
    // an update of a counter row would fail this writer ("could not serialize access"): the stamp must not
    const other = postgres(tdb.url!, { max: 1, onnotice: () => {} });
    try {
      await other.begin('isolation level repeatable read', async (tx) => {
        await tx`select 1`;
        await db.execute(sql`update intake_sync.prescriptions set status = 'ordered' where id = 2`);
        await tx`update intake_sync.prescriptions set status = 'accepted' where id = 1`;
      });
    } finally {
      await other.end({ timeout: 1 });
    }
    expect((await since(null)).map((r) => r.external_id)).toEqual(['rx-2', 'rx-1']);
  });

  test('arguments are validated with an error naming the argument (22023)', async () => {
    const bad = async (cursor: string | null, maxRows: number | null) => {
      try {
        await queryRows(db, sql`select * from intake_sync.status_changes_since(${cursor}::text, ${maxRows}::int)`);
      } catch (error) {
        const inner = (error as { cause?: { code?: string; message?: string } }).cause ?? (error as { code?: string; message?: string });
        return `${inner.code} ${inner.message}`;
      }
      return 'no error';
    };
    for (const cursor of ['', 'garbage', 'v1:1', 'v1:1:x', 'v2:1:1', 'v1:99999999999999999999:1', "v1:1:1' or 1=1"]) {
      expect(await bad(cursor, 10)).toMatch(/^22023 .*cursor is malformed/);
    }
    for (const maxRows of [0, -1, 10_001, null]) expect(await bad(null, maxRows)).toMatch(/^22023 .*max_rows must be between 1 and 10000/);
    // the default max_rows
    expect(await queryRows(db, sql`select * from intake_sync.status_changes_since(null)`)).toEqual([]);
  });
});

describe('writers append their changes in their own transaction', () => {
  test('page apply: the change rows are written by the page transaction, and a rolled-back page leaves none', async () => {
    await registerLocalPrescriptions(db, [
      { external_id: 'rx-ada', prescription_identity: identity() },
      { external_id: 'rx-bob', prescription_identity: identity({ patient_first_name: 'Bob', erx_message_id: 'ERX-B' }) },
    ]);
    const names = namesOf(db);
    const page = preparePage([
      event('e1', 'accepted', '2024-12-10T10:00:00Z'),
      event('e3', 'ordered', '2024-12-10T10:00:00Z', { patient_first_name: 'Bob', erx_message_id: 'ERX-B' }),
    ]);
    const statement = applyPageSql(names, {
      feed: FEED,
      expectedVersion: 0,
      nextIterator: 'it-1',
      receivedAt: new Date().toISOString(),
      eventsJson: page.rowsJson.events,
      malformedJson: page.rowsJson.malformed,
      malformedCount: 0,
    });
    await loadCheckpoint(db, FEED);
    await expect(
      inTransaction(db, async (run) => {
        await run(matchLockSharedSql(names, FEED));
        const [row] = await run<{ status_changes: number }>(statement);
        expect(row?.status_changes).toBe(2);
        throw new Error('page rolled back');
      }),
    ).rejects.toThrow('page rolled back');
    expect(await since(null)).toEqual([]);

    const result = await applyNext([
      event('e1', 'accepted', '2024-12-10T10:00:00Z'),
      event('e2', 'ordered', '2024-12-10T10:05:00Z'),
      event('e3', 'accepted', '2024-12-10T10:00:00Z', { patient_first_name: 'Bob', erx_message_id: 'ERX-B' }),
    ]);
    expect(result.statusChanges).toBe(2);
    const changes = await since(null);
    expect(changes.map((r) => [r.external_id, r.previous_status, r.new_status, r.event_id])).toEqual([
      ['rx-ada', null, 'ordered', 'e2'],
      ['rx-bob', null, 'accepted', 'e3'],
    ]);
    // the same transaction: the change rows carry the xid that wrote the page's events
    const [same] = await queryRows<{ page_xids: number; change_xids: number; shared: number }>(
      db,
      sql`select (select count(distinct xmin::text) from intake_sync.events)::int as page_xids,
        (select count(distinct xid) from intake_sync.status_changes)::int as change_xids,
        (select count(*) from intake_sync.status_changes c join intake_sync.events e
           on (c.xid::text::bigint % 4294967296) = e.xmin::text::bigint)::int as shared`,
    );
    expect(same).toEqual({ page_xids: 1, change_xids: 1, shared: 2 * 3 });
  });

  test('rematch: a registration that resolves held events appends their status change in the rematch transaction', async () => {
    await applyNext([event('e1', 'accepted', '2024-12-10T10:00:00Z'), event('e2', 'ordered', '2024-12-10T10:05:00Z')]);
    expect(await since(null)).toEqual([]);
    await registerLocalPrescriptions(db, [{ external_id: 'rx-ada', prescription_identity: identity() }]);
    const changes = await since(null);
    expect(changes.map((r) => [r.external_id, r.previous_status, r.new_status, r.event_id])).toEqual([['rx-ada', null, 'ordered', 'e2']]);
    const [same] = await queryRows<{ shared: number }>(
      db,
      sql`select count(*)::int as shared from intake_sync.status_changes c join intake_sync.events e
        on (c.xid::text::bigint % 4294967296) = e.xmin::text::bigint`,
    );
    // both events were linked (events.prescription_id updated) by the transaction that changed the status
    expect(same?.shared).toBe(2);
  });

  test('a prescription inserted with a status is a change from nothing', async () => {
    await db.execute(sql`insert into intake_sync.prescriptions (external_id, patient_first_name, patient_last_name, patient_state,
        patient_dob, prescriber_npi, written_date, drug_ndc, identity_key, status, status_rank, status_event_id)
      values ('rx-restored', 'First', 'Last', 'NY', '1990-01-01', '1234567893', '2024-12-01', '00002015204', 'k', 'dispensed', 3, 'e9')`);
    expect((await since(null)).map((r) => [r.external_id, r.previous_status, r.new_status, r.event_id])).toEqual([
      ['rx-restored', null, 'dispensed', 'e9'],
    ]);
  });
});

describe.skipIf(!onPostgres)('NOTIFY intake_sync_status', () => {
  test.skipIf(!onPostgres)(
    `after a commit that changed a status, outside it, with an empty payload: any role may LISTEN, so it names nothing (${NEEDS_POSTGRES})`,
    async () => {
      await insertPrescriptions(3);
      const listener = postgres(tdb.url!, { max: 1, onnotice: () => {} });
      const payloads: string[] = [];
      try {
        await listener.listen('intake_sync_status', (payload) => payloads.push(payload));
        await expect(
          db.transaction(async (tx) => {
            await tx.execute(sql`update intake_sync.prescriptions set status = 'accepted' where id = 1`);
            throw new Error('roll back');
          }),
        ).rejects.toThrow('roll back');
        await db.transaction(async (tx) => {
          await tx.execute(sql`update intake_sync.prescriptions set status = 'accepted' where id <= 2`);
          await tx.execute(sql`update intake_sync.prescriptions set status = 'ordered' where id = 1`);
        });
        // the commit itself notifies nothing (issue 33 §2: a full queue would fail it): a notification
        // sent in it would have reached the listener before this round trip answers
        await listener`select 1`;
        expect(payloads).toEqual([]);
        // the wake-up goes after the commit, in a statement of its own (the page sends it)
        await sendStatusWakeup(db);
        await waitFor(() => payloads.length > 0, { timeoutMs: 10_000, what: 'the notification' });
        // the only notification is the wake-up, and it carries no feed, sequence or count (issue 25 §7: the payload went to every role's listener)
        expect(payloads).toEqual(['']);
      } finally {
        await listener.end({ timeout: 1 });
      }
    },
  );

  test.skipIf(!onPostgres)('status_changes_since is index-driven: no scan of all changes per call', async () => {
    await insertPrescriptions(500);
    for (const status of ['accepted', 'ordered', 'dispensed', 'delivered']) {
      for (let from = 1; from <= 500; from += 50) {
        await db.execute(
          sql`update intake_sync.prescriptions set status = ${status}::text where id between ${from}::int and ${from + 49}::int`,
        );
      }
    }
    await db.execute(sql`analyze intake_sync.status_changes`);
    await db.execute(sql`analyze intake_sync.change_commits`);
    const all = await since(null, 10_000);
    expect(all).toHaveLength(2000);
    const explainer = postgres(tdb.url!, { max: 1, onnotice: (notice) => plans.push(String(notice.message)) });
    const plans: string[] = [];
    try {
      await explainer.unsafe(`load 'auto_explain'`);
      await explainer.unsafe(
        `set auto_explain.log_min_duration = 0; set auto_explain.log_nested_statements = on; set client_min_messages = log`,
      );
      await explainer`select * from intake_sync.status_changes_since(${all[1000]!.cursor}, 100)`;
    } finally {
      await explainer.end({ timeout: 1 });
    }
    const plan = plans.find((p) => p.includes('status_changes s')) ?? plans.join('\n');
    // every feed is walked by its own clock's key from its position (0030), never the commits of all feeds
    expect(plan).toMatch(/Index (Only )?Scan using change_commit_feeds_pk/);
    expect(plan).not.toMatch(/change_commits_commit_seq_key/);
    expect(plan).toMatch(/Index (Only )?Scan using status_changes_xid_idx/);
    expect(plan).not.toMatch(/Seq Scan/);
  });
});
