import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAudit } from '../../../src/store-api/audit/audit-entries.js';
import { namesOf } from '../../../src/db/store-names.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { plainSql, type PlainSql } from '../../support/sql-api/plain-sql.js';
import { roleTagStatement } from '../../support/test-run.js';

let tdb: TestDatabase;
let plain: PlainSql;

beforeAll(async () => {
  tdb = await createTestDatabase('audit');
  plain = plainSql(tdb);
});
afterAll(async () => {
  await plain?.close();
  await tdb?.drop();
});

describe('the audit trail (0010_audit_log.sql)', () => {
  it('recordAudit writes one row in the caller transaction: role, os actor, action, feed, subject, detail', async () => {
    const db = tdb.database.db;
    const names = namesOf(db);
    await db.transaction(async (tx) => {
      await recordAudit(
        tx,
        names,
        { action: 'checkpoint.reset', feed: 'default', subject: 'it-1', detail: { previous: 'it-0' } },
        'ops@host-1',
      );
    });
    const rows = await plain.query<{ actor: string; action: string; feed: string; subject: string; detail: unknown }>(
      `select actor, action, feed, subject, detail from intake_sync.audit_log where subject = 'it-1'`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.action).toBe('checkpoint.reset');
    expect(rows[0]?.feed).toBe('default');
    expect(rows[0]?.actor).toMatch(/^postgres \(ops@host-1\)$/);
    expect(rows[0]?.detail).toEqual({ previous: 'it-0' });
  });

  it('rolls back with the action', async () => {
    const db = tdb.database.db;
    const names = namesOf(db);
    await expect(
      db.transaction(async (tx) => {
        await recordAudit(tx, names, { action: 'prescription.register', feed: 'default', subject: 'rolled-back' });
        throw new Error('the action failed');
      }),
    ).rejects.toThrow('the action failed');
    const rows = await plain.query(`select 1 from intake_sync.audit_log where subject = 'rolled-back'`);
    expect(rows).toHaveLength(0);
  });

  it('takes the attribution from SET LOCAL intake_sync.actor when none is passed', async () => {
    await plain.transaction(async (q) => {
      await q(`set local intake_sync.actor = 'nurse-7'`);
      await q(`select intake_sync._audit('quarantine.show', 'default', 'ev-9')`);
    });
    const [row] = await plain.query<{ actor: string }>(`select actor from intake_sync.audit_log where subject = 'ev-9'`);
    expect(row?.actor).toBe('postgres (nurse-7)');
  });

  it('refuses a malformed action or detail, naming the argument, and writes nothing', async () => {
    await expect(plain.query(`select intake_sync._audit('DROP TABLE', 'default', 'x')`)).rejects.toMatchObject({
      code: '22023',
      message: expect.stringMatching(/^action:/),
    });
    await expect(plain.query(`select intake_sync._audit('a.b', 'default', 'x', '[1]'::jsonb)`)).rejects.toMatchObject({
      code: '22023',
      message: expect.stringMatching(/^detail:/),
    });
    await expect(
      plain.query(`select intake_sync._audit('a.b', 'default', 'x', jsonb_build_object('big', repeat('x', 9000)))`),
    ).rejects.toMatchObject({ code: '22023' });
    const rows = await plain.query(`select 1 from intake_sync.audit_entries where subject = 'x'`);
    expect(rows).toHaveLength(0);
  });

  it('a role with the table privileges it could be given still cannot call _audit, update or delete (owner only)', async (ctx) => {
    if (!(await postgresReachable()) || !tdb.url) return ctx.skip(NEEDS_POSTGRES);
    const role = `audit_probe_${randomBytes(3).toString('hex')}`;
    await plain.query(`create role ${role} login`);
    await plain.query(roleTagStatement(role));
    await plain.query(`grant usage on schema intake_sync to ${role}`);
    await plain.query(`grant select on intake_sync.audit_log to ${role}`);
    const url = new URL(tdb.url);
    url.username = role;
    const asRole = postgres(url.toString(), { max: 1, onnotice: () => {}, fetch_types: false });
    try {
      await expect(asRole.unsafe(`select intake_sync._audit('a.b', 'default', 'y')`)).rejects.toMatchObject({ code: '42501' });
      await expect(asRole.unsafe(`delete from intake_sync.audit_entries`)).rejects.toMatchObject({ code: '42501' });
      await expect(asRole.unsafe(`update intake_sync.audit_entries set action = 'x'`)).rejects.toMatchObject({ code: '42501' });
      const seen = await asRole.unsafe(`select count(*)::int as n from intake_sync.audit_log`);
      expect((seen[0] as unknown as { n: number }).n).toBeGreaterThan(0);
    } finally {
      await asRole.end({ timeout: 1 });
      await plain.query(`drop owned by ${role}`);
      await plain.query(`drop role ${role}`);
    }
  });
});
