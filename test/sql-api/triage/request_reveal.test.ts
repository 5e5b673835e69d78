import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { loadCheckpoint } from '../../../src/sync/poll/checkpoint.js';
import { applyPage } from '../../../src/sync/apply/apply-page.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { event, truncateStore } from '../../support/sync/fixtures.js';
import { plainSql, type PlainSql } from '../../support/sql-api/plain-sql.js';
import { loginAs, type RoleSession } from '../../support/sql-api/roles.js';

// PHI reads always leave a record (issue 25, item 4): show_quarantined returns an identity only after a
// COMMITTED request_reveal by the same login, so a read in a transaction that rolls back is on record.
// Everything runs as real roles with the grants `intake-sync grants` prints.

const realServer = await postgresReachable();
let tdb: TestDatabase;
let owner: PlainSql;
let triage: RoleSession;
let otherApp: RoleSession;
let runtime: RoleSession;

beforeAll(async () => {
  if (!realServer) return;
  tdb = await createTestDatabase('sql_api_reveal');
  owner = plainSql(tdb);
  triage = await loginAs(tdb, owner, 'app', 'reveal_triage');
  otherApp = await loginAs(tdb, owner, 'app', 'reveal_other');
  runtime = await loginAs(tdb, owner, 'runtime', 'reveal_runtime');
});
afterAll(async () => {
  if (!realServer) return;
  await Promise.all([triage.close(), otherApp.close(), runtime.close()]);
  await owner.close();
  await tdb.drop();
});
beforeEach(async () => {
  if (!realServer) return;
  await truncateStore(tdb.database.db);
  await owner.query('truncate intake_sync.audit_entries');
  const { version } = await loadCheckpoint(tdb.database.db, 'default');
  await applyPage(tdb.database.db, {
    feed: 'default',
    expectedVersion: version,
    nextIterator: 'after',
    events: [event('e1', 'accepted', '2024-12-10T10:00:00Z', { patient_last_name: 'Lovelase' })],
  });
});

const requests = async () =>
  owner.query<{ actor: string; subject: string; on_behalf_of: string | null }>(
    `select actor, subject, on_behalf_of from intake_sync.audit_entries where action = 'quarantine.reveal_requested' order by id`,
  );
const codeOf = async (statement: Promise<unknown>) => {
  try {
    await statement;
    return 'no error';
  } catch (error) {
    return (error as { code?: string }).code;
  }
};

describe.skipIf(!realServer)(`request_reveal() then show_quarantined(), as application roles (${NEEDS_POSTGRES})`, () => {
  test('a request written in the same, still open transaction does not count: 42501, and the rollback leaves nothing', async () => {
    const refused = triage.sql.begin(async (tx) => {
      await tx`select intake_sync.request_reveal('default', 'e1')`;
      await tx`select * from intake_sync.show_quarantined('default', 'e1')`;
    });
    await expect(refused).rejects.toMatchObject({ code: '42501', message: expect.stringMatching(/request_reveal.*commit/) });
    expect(await requests()).toEqual([]);
  });

  test('without any request: 42501 naming request_reveal, and no identity', async () => {
    await expect(triage.sql`select * from intake_sync.show_quarantined('default', 'e1')`).rejects.toMatchObject({
      code: '42501',
      message: expect.stringContaining('call request_reveal(feed, event_id) and commit first'),
    });
  });

  test('a committed request, then a read in a transaction that rolls back: the identity was shown and the record stays', async () => {
    // the person this login acts for, on the request and the read alike (a request counts for its person only)
    const [requested] = await triage.sql.begin(async (tx) => {
      await tx`select set_config('intake_sync.actor', 'nurse-7@ward-3', true)`;
      return tx`select intake_sync.request_reveal('default', 'e1') as id`;
    });
    expect(Number(requested?.id)).toBeGreaterThan(0);
    let shown: unknown;
    await expect(
      triage.sql.begin(async (tx) => {
        await tx`select set_config('intake_sync.actor', 'nurse-7@ward-3', true)`;
        [shown] = await tx`select prescription_identity from intake_sync.show_quarantined('default', 'e1')`;
        throw new Error('the caller rolls back');
      }),
    ).rejects.toThrow('the caller rolls back');
    expect(shown).toMatchObject({ prescription_identity: expect.objectContaining({ patient_last_name: 'Lovelase' }) });
    // the durable record: the request, by this login, about this finding (quarantine.show rolled back with the read)
    expect(await requests()).toEqual([{ actor: triage.name, subject: 'e1', on_behalf_of: 'nurse-7@ward-3' }]);
    const [id] = await owner.query<{ id: string }>(`select id from intake_sync.audit_entries where action = 'quarantine.reveal_requested'`);
    expect(Number(id?.id)).toBe(Number(requested?.id));
    expect(await owner.query(`select 1 from intake_sync.audit_entries where action = 'quarantine.show'`)).toEqual([]);
  });

  test("another login cannot use someone else's request", async () => {
    await triage.sql`select intake_sync.request_reveal('default', 'e1')`;
    expect(await codeOf(otherApp.sql`select * from intake_sync.show_quarantined('default', 'e1')`)).toBe('42501');
    expect(await codeOf(triage.sql`select * from intake_sync.show_quarantined('default', 'e1')`)).toBe('no error');
  });

  test('a request older than 5 minutes no longer counts', async () => {
    await triage.sql`select intake_sync.request_reveal('default', 'e1')`;
    await owner.query(
      `update intake_sync.audit_entries set "at" = now() - interval '6 minutes' where action = 'quarantine.reveal_requested'`,
    );
    expect(await codeOf(triage.sql`select * from intake_sync.show_quarantined('default', 'e1')`)).toBe('42501');
  });

  test('a request for one finding does not open another; an unknown finding is refused (P0002) and writes nothing', async () => {
    await applyPage(tdb.database.db, {
      feed: 'default',
      expectedVersion: (await loadCheckpoint(tdb.database.db, 'default')).version,
      nextIterator: 'after-2',
      events: [event('e2', 'accepted', '2024-12-10T11:00:00Z', { patient_last_name: 'Nobody' })],
    });
    await triage.sql`select intake_sync.request_reveal('default', 'e1')`;
    expect(await codeOf(triage.sql`select * from intake_sync.show_quarantined('default', 'e2')`)).toBe('42501');
    expect(await codeOf(triage.sql`select intake_sync.request_reveal('default', 'nope')`)).toBe('P0002');
    expect((await requests()).map((r) => r.subject)).toEqual(['e1']);
  });

  test('one login shared by several people (SSO): a request counts for its own person (intake_sync.actor) only', async () => {
    const as = (person: string, statement: string) =>
      triage.sql.begin(async (tx) => {
        await tx`select set_config('intake_sync.actor', ${person}, true)`;
        return tx.unsafe(statement);
      });
    await as('ada@clinic.example', `select intake_sync.request_reveal('default', 'e1')`);
    expect(await codeOf(as('bob@clinic.example', `select * from intake_sync.show_quarantined('default', 'e1')`))).toBe('42501');
    // nor for the same login with no person named
    expect(await codeOf(triage.sql`select * from intake_sync.show_quarantined('default', 'e1')`)).toBe('42501');
    const [shown] = await as('ada@clinic.example', `select finding_event_id from intake_sync.show_quarantined('default', 'e1')`);
    expect(shown?.finding_event_id).toBe('e1');
  });

  test('nobody forges a request through _audit, not even the runtime role (42501)', async () => {
    expect(await codeOf(runtime.sql`select intake_sync._audit('quarantine.reveal_requested', 'default', 'e1')`)).toBe('42501');
    expect(await codeOf(runtime.sql`select * from intake_sync.show_quarantined('default', 'e1')`)).toBe('42501');
    // an application has no _audit at all
    expect(await codeOf(triage.sql`select intake_sync._audit('quarantine.reveal_requested', 'default', 'e1')`)).toBe('42501');
    expect(await requests()).toEqual([]);
  });
});
