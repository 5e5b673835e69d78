import { describe, expect, it } from 'vitest';
import { connectAsRole, databaseTarget } from '../../src/console/user-connection.js';
import { ADMIN_URL, NEEDS_POSTGRES, postgresReachable } from '../support/db.js';

// A signed-in role's connection carries the console's session settings: statements time out, an idle
// transaction ends, and JIT is off (with planner statistics a page's estimated cost passed
// jit_above_cost and each request compiled its plan first, about 1 s at 1M events: docs/performance.md).
const real = await postgresReachable();

describe.skipIf(!real)(`the console's user connection (${NEEDS_POSTGRES})`, () => {
  it('runs with jit off, a statement_timeout and an idle-in-transaction timeout', async () => {
    const url = new URL(ADMIN_URL);
    const sql = await connectAsRole(
      databaseTarget(ADMIN_URL, 'intake_sync'),
      decodeURIComponent(url.username),
      decodeURIComponent(url.password),
    );
    try {
      const rows = await sql<{ name: string; setting: string }[]>`
        select name, setting from pg_settings where name in ('jit', 'statement_timeout', 'idle_in_transaction_session_timeout') order by name`;
      expect(Object.fromEntries(rows.map((r) => [r.name, r.setting]))).toEqual({
        idle_in_transaction_session_timeout: '30000',
        jit: 'off',
        statement_timeout: '15000',
      });
    } finally {
      await sql.end({ timeout: 1 });
    }
  });
});
