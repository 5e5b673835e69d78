import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { registerFeeds } from '../../../src/db/feed-registry.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { plainSql, type PlainSql } from '../../support/sql-api/plain-sql.js';
import { loginAs, type RoleSession } from '../../support/sql-api/roles.js';

// pause_feed() and resume_feed() (sql/api/feeds/): the runtime role pauses and resumes a feed for
// every replica, audited; an app role has no grant on either; feed_overview shows the pause.

const realServer = await postgresReachable();
let tdb: TestDatabase;
let owner: PlainSql;
let runtime: RoleSession;
let app: RoleSession;

const code = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return 'no error';
};

describe.skipIf(!realServer)(`pause_feed() and resume_feed() as real roles (${NEEDS_POSTGRES})`, () => {
  beforeAll(async () => {
    tdb = await createTestDatabase('sql_api_pause_feed');
    owner = plainSql(tdb);
    await registerFeeds(tdb.database.db, ['clinic-a', 'clinic-b'], null);
    runtime = await loginAs(tdb, owner, 'runtime', 'pause_runtime');
    app = await loginAs(tdb, owner, 'app', 'pause_app');
  });
  afterAll(async () => {
    for (const role of [runtime, app]) {
      await role?.close();
      if (role) {
        await owner?.query(`drop owned by "${role.name}"`);
        await owner?.query(`drop role "${role.name}"`);
      }
    }
    await owner?.close();
    await tdb?.drop();
  });

  const audit = () =>
    owner.query<{ action: string; feed: string; detail: Record<string, unknown>; actor: string; on_behalf_of: string | null }>(
      `select action, feed, detail, actor, on_behalf_of from "intake_sync".audit_entries where action like 'feed.%' order by id`,
    );
  const overview = (feed: string) =>
    owner.query<{ pause_reason: string | null; paused_by: string | null; paused_at: Date | null }>(
      `select pause_reason, paused_by, paused_at from "intake_sync".feed_overview where feed = $1`,
      [feed],
    );

  test('the runtime role pauses, re-pauses with another reason and resumes, each audited with its attribution', async () => {
    const pause = (reason: string) =>
      runtime.sql.begin(async (tx) => {
        await tx`select set_config('intake_sync.actor', 'ana@ops', true)`;
        return (await tx`select "intake_sync".pause_feed('clinic-a', ${reason}) as changed`)[0]?.changed;
      });
    expect(await pause('clinic_leaving')).toBe(true);
    expect(await overview('clinic-a')).toEqual([{ pause_reason: 'clinic_leaving', paused_by: 'ana@ops', paused_at: expect.any(Date) }]);
    expect(await pause('operator_review')).toBe(false);
    expect((await overview('clinic-a'))[0]?.pause_reason).toBe('operator_review');
    // the other feed is untouched
    expect((await overview('clinic-b'))[0]?.pause_reason).toBeNull();

    expect((await runtime.sql`select "intake_sync".resume_feed('clinic-a') as changed`)[0]?.changed).toBe(true);
    expect((await runtime.sql`select "intake_sync".resume_feed('clinic-a') as changed`)[0]?.changed).toBe(false);
    expect((await overview('clinic-a'))[0]?.pause_reason).toBeNull();

    expect(await audit()).toEqual([
      {
        action: 'feed.pause',
        feed: 'clinic-a',
        detail: { reason: 'clinic_leaving', previous_reason: null },
        actor: runtime.name,
        on_behalf_of: 'ana@ops',
      },
      {
        action: 'feed.pause',
        feed: 'clinic-a',
        detail: { reason: 'operator_review', previous_reason: 'clinic_leaving' },
        actor: runtime.name,
        on_behalf_of: 'ana@ops',
      },
      // resume_feed writes one row only when the feed was paused
      { action: 'feed.resume', feed: 'clinic-a', detail: { paused_for: 'operator_review' }, actor: runtime.name, on_behalf_of: null },
    ]);
  });

  test.each([
    ['a reason that is no code', `select "intake_sync".pause_feed('clinic-a', 'Clinic is leaving!')`, '22023'],
    ['no reason', `select "intake_sync".pause_feed('clinic-a', null)`, '23502'],
    ['a malformed feed', `select "intake_sync".pause_feed('Clinic A', 'x')`, '22023'],
    ['a feed not configured', `select "intake_sync".pause_feed('clinic-z', 'x')`, '42704'],
    ['resume of a feed not configured', `select "intake_sync".resume_feed('clinic-z')`, '42704'],
  ])('refused, writing nothing: %s', async (_label, statement, expected) => {
    const before = (await audit()).length;
    expect(await code(runtime.sql.unsafe(statement))).toBe(expected);
    expect((await audit()).length).toBe(before);
    expect(await owner.query(`select feed from "intake_sync".feed_pauses`)).toEqual([]);
  });

  test('an app role may neither pause nor resume, nor write the table', async () => {
    expect(await code(app.sql`select "intake_sync".pause_feed('clinic-a', 'x')`)).toBe('42501');
    expect(await code(app.sql`select "intake_sync".resume_feed('clinic-a')`)).toBe('42501');
    expect(await code(app.sql`insert into "intake_sync".feed_pauses (feed, reason, paused_by) values ('clinic-a', 'x', 'y')`)).toBe(
      '42501',
    );
    // nor may the runtime role write it except through the functions (their audit row comes with them)
    expect(await code(runtime.sql`insert into "intake_sync".feed_pauses (feed, reason, paused_by) values ('clinic-a', 'x', 'y')`)).toBe(
      '42501',
    );
  });
});
