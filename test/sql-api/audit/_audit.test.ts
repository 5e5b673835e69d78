import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { plainSql, type PlainSql } from '../../support/sql-api/plain-sql.js';
import { loginAs, type RoleSession } from '../../support/sql-api/roles.js';

// on_behalf_of is the caller's own word (self-asserted), restricted to a character set that cannot
// carry a newline or a terminal escape into `audit list` (issue 25, item 5). As the runtime role.

const realServer = await postgresReachable();
let tdb: TestDatabase;
let owner: PlainSql;
let runtime: RoleSession;

beforeAll(async () => {
  if (!realServer) return;
  tdb = await createTestDatabase('sql_api_audit_attr');
  owner = plainSql(tdb);
  runtime = await loginAs(tdb, owner, 'runtime', 'audit_runtime');
});
afterAll(async () => {
  if (!realServer) return;
  await runtime.close();
  await owner.close();
  await tdb.drop();
});

describe.skipIf(!realServer)(`_audit's on_behalf_of as the runtime role (${NEEDS_POSTGRES})`, () => {
  test.each([
    ['a newline and a fake line', 'x\n2026-01-01 purge.run clinic-b'],
    ['an ESC sequence', '\u001b[31mred'],
    ['a space', 'alice smith'],
    ['a C1 control', 'a\u009bb'],
    ['129 characters', 'a'.repeat(129)],
  ])('refuses %s (22023 naming on_behalf_of), as the argument and as intake_sync.actor, writing nothing', async (_case, value) => {
    await expect(runtime.sql`select intake_sync._audit('checkpoint.reset', 'default', 's1', '{}'::jsonb, ${value})`).rejects.toMatchObject({
      code: '22023',
      message: expect.stringMatching(/^on_behalf_of/),
    });
    await expect(
      runtime.sql.begin(async (tx) => {
        await tx`select set_config('intake_sync.actor', ${value}, true)`;
        await tx`select intake_sync._audit('checkpoint.reset', 'default', 's1')`;
      }),
    ).rejects.toMatchObject({ code: '22023' });
    expect(await owner.query(`select 1 from intake_sync.audit_entries where subject = 's1'`)).toEqual([]);
  });

  test('accepts user@host, codes and 128 characters', async () => {
    for (const value of ['alice@ops-1', 'svc:app+1.x_y', 'a'.repeat(128)]) {
      await runtime.sql`select intake_sync._audit('checkpoint.reset', 'default', 's2', '{}'::jsonb, ${value})`;
    }
    const rows = await owner.query<{ on_behalf_of: string }>(
      `select on_behalf_of from intake_sync.audit_entries where subject = 's2' order by id`,
    );
    expect(rows.map((r) => r.on_behalf_of)).toEqual(['alice@ops-1', 'svc:app+1.x_y', 'a'.repeat(128)]);
  });
});
