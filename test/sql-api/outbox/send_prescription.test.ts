import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { queryRows, type Db } from '../../../src/db/connection.js';
import { samplePrescription } from '../../../src/sandbox/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';

// The outbox functions as a vendor's application calls them: plain SQL text, its own transactions.

let tdb: TestDatabase;
let db: Db;

const run = (text: string) => queryRows<Record<string, unknown>>(db, sql.raw(text));
const literal = (value: unknown) => `'${JSON.stringify(value).replaceAll("'", "''")}'::jsonb`;
const outboxCount = async () => Number((await run('select count(*) as n from intake_sync.outbox'))[0]?.n);

/** The SQLSTATE and message a statement fails with. */
async function failure(text: string): Promise<{ code: string; message: string; column: string | undefined }> {
  try {
    await run(text);
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause ?? error;
    const e = cause as { code?: string; message: string; column_name?: string; column?: string };
    return { code: String(e.code), message: e.message, column: e.column_name ?? e.column };
  }
  throw new Error(`expected ${text.slice(0, 60)} to fail`);
}

beforeAll(async () => {
  tdb = await createTestDatabase('outbox_functions');
  db = tdb.database.db;
  await run('create table public.vendor_orders (id serial primary key, note text)');
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  await run('truncate intake_sync.outbox, public.vendor_orders');
});

describe('send_prescription / cancel_prescription', () => {
  test('queue one pending row each, returning its id; the view shows it without the body', async () => {
    const [sent] = await run(`select intake_sync.send_prescription(${literal(samplePrescription(1, { prefix: 'fn' }))}) as id`);
    const [cancel] = await run(`select intake_sync.cancel_prescription('fn-1') as id`);
    expect(Number(cancel?.id)).toBeGreaterThan(Number(sent?.id));
    const rows = await run('select * from intake_sync.outbox_status order by id');
    expect(rows.map((r) => [r.external_id, r.kind, r.state, r.attempts, r.last_error])).toEqual([
      ['fn-1', 'send', 'pending', 0, null],
      ['fn-1', 'cancel', 'pending', 0, null],
    ]);
    expect(Object.keys(rows[0] ?? {})).not.toContain('body');
    for (const column of ['created_at', 'updated_at', 'last_attempt_at', 'completed_at'])
      expect(Object.keys(rows[0] ?? {})).toContain(column);
  });

  test("the vendor's transaction rolled back: neither its own row nor the outbox row remains", async () => {
    await db
      .transaction(async (tx) => {
        await tx.execute(sql.raw(`insert into public.vendor_orders (note) values ('order 1')`));
        await tx.execute(sql.raw(`select intake_sync.send_prescription(${literal(samplePrescription(2, { prefix: 'fn' }))})`));
        await tx.execute(sql.raw(`select intake_sync.cancel_prescription('fn-2')`));
        throw new Error('vendor rollback');
      })
      .catch((error: unknown) => {
        if (!(error instanceof Error && error.message === 'vendor rollback')) throw error;
      });
    expect(await outboxCount()).toBe(0);
    expect((await run('select count(*)::int as n from public.vendor_orders'))[0]?.n).toBe(0);
  });

  test('committed together with the vendor row', async () => {
    await db.transaction(async (tx) => {
      await tx.execute(sql.raw(`insert into public.vendor_orders (note) values ('order 2')`));
      await tx.execute(sql.raw(`select intake_sync.send_prescription(${literal(samplePrescription(3, { prefix: 'fn' }))})`));
    });
    expect(await outboxCount()).toBe(1);
  });

  test('bad input raises an error naming the field path (never the value) and writes nothing', async () => {
    const badNpi = { ...samplePrescription(4, { prefix: 'fn' }), prescriber: { ...samplePrescription(4).prescriber, npi: '1234567890' } };
    const bad = await failure(`select intake_sync.send_prescription(${literal(badNpi)})`);
    expect(bad).toMatchObject({ code: '22023', message: 'prescription.prescriber.npi: must be a 10-digit NPI with a valid check digit' });
    expect(bad.message).not.toContain('1234567890');

    const { patient, ...noPatient } = samplePrescription(5, { prefix: 'fn' });
    expect(patient).toBeDefined();
    expect(await failure(`select intake_sync.send_prescription(${literal(noPatient)})`)).toMatchObject({
      code: '23502',
      message: 'prescription.patient: is required',
    });
    expect(await failure('select intake_sync.send_prescription(null)')).toMatchObject({
      code: '23502',
      message: 'prescription: is required',
    });
    expect(await failure(`select intake_sync.send_prescription('[1]'::jsonb)`)).toMatchObject({
      code: '22023',
      message: 'prescription: must be an object',
    });
    expect(await failure('select intake_sync.cancel_prescription(null)')).toMatchObject({
      code: '23502',
      message: 'external_id: is required',
    });
    expect(await failure(`select intake_sync.cancel_prescription(' ')`)).toMatchObject({
      code: '22023',
      message: 'external_id: must not be empty',
    });
    expect(await outboxCount()).toBe(0);
  });

  test('an error inside a vendor transaction leaves its earlier outbox rows to its own rollback', async () => {
    await db
      .transaction(async (tx) => {
        await tx.execute(sql.raw(`select intake_sync.send_prescription(${literal(samplePrescription(6, { prefix: 'fn' }))})`));
        await tx.execute(sql.raw(`select intake_sync.send_prescription('{}'::jsonb)`));
      })
      .catch(() => {});
    expect(await outboxCount()).toBe(0);
  });

  test('a second send of a pending or delivered external_id is refused; after a failed send it is accepted', async () => {
    const body = literal(samplePrescription(8, { prefix: 'fn' }));
    await run(`select intake_sync.send_prescription(${body})`);
    expect(await failure(`select intake_sync.send_prescription(${body})`)).toMatchObject({
      code: '23505',
      message: 'prescription.external_id: already in the outbox (pending or delivered)',
    });
    await run(`update intake_sync.outbox set state = 'failed'`);
    await run(`select intake_sync.send_prescription(${body})`);
    expect(await outboxCount()).toBe(2);
  });

  test('the external_id is stored trimmed, as the client sends it', async () => {
    await run(`select intake_sync.send_prescription(${literal({ ...samplePrescription(9, { prefix: 'fn' }), external_id: ' fn-9\t' })})`);
    await run(`select intake_sync.cancel_prescription(E'\\u00a0fn-9 ')`);
    expect((await run('select distinct external_id from intake_sync.outbox')).map((r) => r.external_id)).toEqual(['fn-9']);
  });

  test('the functions are SECURITY DEFINER with a fixed search_path, and not executable by PUBLIC', async () => {
    const rows =
      await run(`select p.proname, p.prosecdef, to_jsonb(p.proconfig) as proconfig, has_function_privilege('public', p.oid, 'execute') as public_exec
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = 'intake_sync' and p.proname in ('send_prescription', 'cancel_prescription') order by 1`);
    expect(rows).toEqual([
      { proname: 'cancel_prescription', prosecdef: true, proconfig: ['search_path=pg_catalog, pg_temp'], public_exec: false },
      { proname: 'send_prescription', prosecdef: true, proconfig: ['search_path=pg_catalog, pg_temp'], public_exec: false },
    ]);
  });
});
