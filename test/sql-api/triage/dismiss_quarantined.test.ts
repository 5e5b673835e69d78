import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { applyPage } from '../../../src/sync/apply/apply-page.js';
import { loadCheckpoint } from '../../../src/sync/poll/checkpoint.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { event, truncateStore } from '../../support/sync/fixtures.js';
import { plainSql, sqlError, type PlainSql } from '../../support/sql-api/plain-sql.js';
import { loginAs, type RoleSession } from '../../support/sql-api/roles.js';

// Issue 27 §6: dismiss_quarantined() closes the finding and every other open finding of the same
// subscription (as resolve_quarantined applies every held event of it), unless only_this_event; one
// audit row per finding; returns the count. Called as an application role with the SQL API grants only.

const realServer = await postgresReachable();
let tdb: TestDatabase;
let owner: PlainSql;
let app: RoleSession;
/** the audit trail outlives truncateStore: each test reads the rows after this id */
let auditFloor = 0;

describe.skipIf(!realServer)(`dismiss_quarantined() by subscription, as the app role (${NEEDS_POSTGRES})`, () => {
  beforeAll(async () => {
    tdb = await createTestDatabase('sql_api_dismiss_sub');
    owner = plainSql(tdb);
    app = await loginAs(tdb, owner, 'app', 'dismiss_app');
  });
  afterAll(async () => {
    await app?.close();
    await owner?.query(`drop owned by "${app.name}"`);
    await owner?.query(`drop role "${app.name}"`);
    await owner?.close();
    await tdb?.drop();
  });
  beforeEach(async () => {
    await truncateStore(tdb.database.db);
    const [row] = await owner.query<{ id: number }>(`select coalesce(max(id), 0)::int as id from "intake_sync".audit_entries`);
    auditFloor = row?.id ?? 0;
  });

  const subscribed = (e: Record<string, unknown>, subscription: string) => ({ ...e, subscription_id: subscription });
  /** Three held events of sub-x (no local prescription matches), one of sub-y, one malformed. */
  async function held() {
    const { db } = tdb.database;
    const { version } = await loadCheckpoint(db, 'default');
    await applyPage(db, {
      feed: 'default',
      expectedVersion: version,
      nextIterator: `after-v${version}`,
      events: [
        subscribed(event('x1', 'accepted', '2024-12-10T10:00:00Z', { patient_last_name: 'Nobody' }), 'sub-x'),
        subscribed(event('x2', 'ordered', '2024-12-10T11:00:00Z', { patient_last_name: 'Nobody' }), 'sub-x'),
        subscribed(event('x3', 'dispensed', '2024-12-10T12:00:00Z', { patient_last_name: 'Nobody' }), 'sub-x'),
        subscribed(event('y1', 'accepted', '2024-12-10T10:00:00Z', { patient_last_name: 'Nobody' }), 'sub-y'),
        { id: 'bad-1', name: 'accepted' },
      ],
    });
  }
  const open = async () =>
    (await app.sql<{ event_id: string }[]>`select event_id from intake_sync.quarantine_open order by event_id`).map((r) => r.event_id);
  const dismissAudit = async () =>
    owner.query<{ subject: string; detail: Record<string, unknown>; actor: string }>(
      `select subject, detail, actor from "intake_sync".audit_entries where action = 'quarantine.dismiss' and id > $1 order by subject`,
      [auditFloor],
    );

  test('closes every open finding of the subscription, one audit row each, and returns the count', async () => {
    await held();
    const [row] = await app.sql`select intake_sync.dismiss_quarantined('default', 'x2', 'not_ours') as closed`;
    expect(row).toEqual({ closed: 3 });
    expect(await open()).toEqual(['bad-1', 'y1']);
    const audit = await dismissAudit();
    expect(audit.map((a) => [a.subject, a.actor])).toEqual([
      ['x1', app.name],
      ['x2', app.name],
      ['x3', app.name],
    ]);
    expect(audit.find((a) => a.subject === 'x2')?.detail).toEqual({
      reason: 'not_ours',
      finding_reason: 'unmatched',
      subscription_id: 'sub-x',
    });
    expect(audit.find((a) => a.subject === 'x1')?.detail).toEqual({
      reason: 'not_ours',
      finding_reason: 'unmatched',
      subscription_id: 'sub-x',
      with_event_id: 'x2',
    });
    const notes = await owner.query(
      `select event_id, resolution, resolution_note from "intake_sync".quarantine where resolved_at is not null order by event_id`,
    );
    expect(notes).toEqual(['x1', 'x2', 'x3'].map((id) => ({ event_id: id, resolution: 'dismissed', resolution_note: 'not_ours' })));
  });

  test('only_this_event closes that finding alone; a malformed finding (no subscription) closes alone', async () => {
    await held();
    expect(await app.sql`select intake_sync.dismiss_quarantined('default', 'x1', 'not_ours', true) as closed`).toEqual([{ closed: 1 }]);
    expect(await open()).toEqual(['bad-1', 'x2', 'x3', 'y1']);
    expect(await app.sql`select intake_sync.dismiss_quarantined('default', 'bad-1', 'operator_test') as closed`).toEqual([{ closed: 1 }]);
    expect(await open()).toEqual(['x2', 'x3', 'y1']);
    // the rest of sub-x, by default: the one already closed is not counted or audited again
    expect(await app.sql`select intake_sync.dismiss_quarantined('default', 'x3', 'not_ours') as closed`).toEqual([{ closed: 2 }]);
    expect(await open()).toEqual(['y1']);
    expect((await dismissAudit()).map((a) => a.subject)).toEqual(['bad-1', 'x1', 'x2', 'x3']);
  });

  test('refuses, writing nothing: a closed finding, a null only_this_event, REPEATABLE READ; a rollback undoes them all', async () => {
    await held();
    await app.sql`select intake_sync.dismiss_quarantined('default', 'y1', 'not_ours')`;
    expect(await sqlError(app.sql`select intake_sync.dismiss_quarantined('default', 'y1', 'not_ours')`)).toMatchObject({
      code: '55000',
      message: 'event_id: the finding is already closed (dismissed)',
    });
    expect(await sqlError(app.sql`select intake_sync.dismiss_quarantined('default', 'x1', 'not_ours', null)`)).toMatchObject({
      code: '23502',
      message: 'only_this_event: required (true or false)',
    });
    const repeatable = await sqlError(
      app.sql.begin(async (tx) => {
        await tx`set transaction isolation level repeatable read`;
        await tx`select intake_sync.dismiss_quarantined('default', 'x1', 'not_ours')`;
      }),
    );
    expect(repeatable.code).toBe('25000');
    const rollback = new Error('rollback');
    await expect(
      app.sql.begin(async (tx) => {
        await tx`select intake_sync.dismiss_quarantined('default', 'x1', 'not_ours')`;
        throw rollback;
      }),
    ).rejects.toBe(rollback);
    expect(await open()).toEqual(['bad-1', 'x1', 'x2', 'x3']);
    expect((await dismissAudit()).map((a) => a.subject)).toEqual(['y1']);
  });

  test('the 3-argument signature is gone (dropped by the migration), the 4-argument one is the only one', async () => {
    const rows = await owner.query<{ args: string }>(
      `select pg_get_function_identity_arguments(p.oid) as args from pg_proc p join pg_namespace n on n.oid = p.pronamespace
       where n.nspname = 'intake_sync' and p.proname = 'dismiss_quarantined'`,
    );
    expect(rows).toEqual([{ args: 'feed text, event_id text, reason text, only_this_event boolean' }]);
  });
});
