import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantsScript } from '../../../src/db/grants-script.js';
import { apiInputProblem } from '../../../src/intake/api-input-limits.js';
import { FREE_TEXT_KEYS, MAX_API_BODY_BYTES, MAX_FREE_TEXT_LENGTH, MAX_IDENTITY_FIELD_LENGTH } from '../../../src/intake/limits.js';
import { identityOf, samplePrescription } from '../../../src/sandbox/fixtures.js';
import { ADMIN_URL, createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { roleTagStatement } from '../../support/test-run.js';

const hasPostgres = await postgresReachable();

/**
 * Issue 25 item 3: the SQL API refuses input over its caps (SQLSTATE 22001, the field named, nothing
 * queued), as an application role calls it; and the caps in SQL are the caps in src/intake/limits.ts.
 */
describe.skipIf(!hasPostgres)(`SQL API input caps (${NEEDS_POSTGRES})`, () => {
  let tdb: TestDatabase;
  let owner: postgres.Sql;
  let app: postgres.Sql;
  const role = `intake_caps_app_${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    tdb = await createTestDatabase('input_caps');
    owner = postgres(tdb.url ?? '', { max: 1, onnotice: () => {} });
    await owner.unsafe(`create role "${role}" login`);
    await owner.unsafe(roleTagStatement(role));
    await owner.unsafe(grantsScript('app', 'intake_sync', role, { kind: 'feeds', feeds: ['default'] }).join('\n'));
    const url = new URL(tdb.url ?? '');
    url.username = role;
    app = postgres(url.toString(), { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await app?.end({ timeout: 1 });
    await owner?.end({ timeout: 1 });
    await tdb?.drop();
    const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop role if exists "${role}"`).catch(() => {});
    await admin.end({ timeout: 1 });
  });

  const queued = async () => Number((await owner`select count(*)::int as n from intake_sync.outbox`)[0]?.n);

  async function failure(run: () => Promise<unknown>): Promise<{ code: string; message: string; column: string | undefined }> {
    try {
      await run();
    } catch (error) {
      const e = error as { code?: string; message: string; column_name?: string };
      return { code: String(e.code), message: e.message, column: e.column_name };
    }
    throw new Error('expected the call to fail');
  }

  it('a 5 MB note is refused (22001 naming the body), nothing queued; the example prescription with a short note is accepted', async () => {
    const before = await queued();
    const huge = { ...samplePrescription(1, { prefix: 'cap' }), note: 'x'.repeat(5 * 1024 * 1024) };
    const refused = await failure(() => app`select intake_sync.send_prescription(${JSON.stringify(huge)}::text::jsonb, 'default')`);
    expect(refused).toMatchObject({ code: '22001', column: 'prescription' });
    expect(refused.message).toContain(`prescription: must be at most ${MAX_API_BODY_BYTES} bytes of JSON`);
    expect(refused.message).not.toContain('xxxx');
    expect(await queued()).toBe(before);

    const fine = { ...samplePrescription(2, { prefix: 'cap' }), note: 'Patient prefers the morning pickup.' };
    const [row] = await app`select intake_sync.send_prescription(${JSON.stringify(fine)}::text::jsonb, 'default') as id`;
    expect(Number(row?.id)).toBeGreaterThan(0);
    expect(await queued()).toBe(before + 1);
  });

  it('each string over its cap is refused naming its path: a long note, a long name, a long external_id to cancel or register', async () => {
    const before = await queued();
    const longNote = { ...samplePrescription(3, { prefix: 'cap' }), note: 'n'.repeat(MAX_FREE_TEXT_LENGTH + 1) };
    expect(
      await failure(() => app`select intake_sync.send_prescription(${JSON.stringify(longNote)}::text::jsonb, 'default')`),
    ).toMatchObject({
      code: '22001',
      column: 'prescription.note',
      message: `prescription.note: must be at most ${MAX_FREE_TEXT_LENGTH} characters (got ${MAX_FREE_TEXT_LENGTH + 1})`,
    });
    const atCap = { ...samplePrescription(4, { prefix: 'cap' }), note: 'n'.repeat(MAX_FREE_TEXT_LENGTH) };
    await app`select intake_sync.send_prescription(${JSON.stringify(atCap)}::text::jsonb, 'default')`;

    const sample = samplePrescription(5, { prefix: 'cap' });
    const longName = { ...sample, patient: { ...sample.patient, last_name: 'L'.repeat(MAX_IDENTITY_FIELD_LENGTH + 1) } };
    expect(
      await failure(() => app`select intake_sync.send_prescription(${JSON.stringify(longName)}::text::jsonb, 'default')`),
    ).toMatchObject({ code: '22001', column: 'prescription.patient.last_name' });

    const longId = 'c'.repeat(MAX_IDENTITY_FIELD_LENGTH + 1);
    expect(await failure(() => app`select intake_sync.cancel_prescription(${longId}, 'default')`)).toMatchObject({
      code: '22001',
      column: 'external_id',
    });
    expect(await queued()).toBe(before + 1);

    const identity = identityOf(sample);
    expect(
      await failure(() => app`select intake_sync.register_prescription(${longId}, ${JSON.stringify(identity)}::text::jsonb, 'default')`),
    ).toMatchObject({ code: '22001', column: 'external_id' });
    const bigIdentity = { ...identity, patient_last_name: 'x'.repeat(MAX_API_BODY_BYTES) };
    expect(
      await failure(() => app`select intake_sync.register_prescription('cap-reg', ${JSON.stringify(bigIdentity)}::text::jsonb, 'default')`),
    ).toMatchObject({ code: '22001', column: 'identity' });
    expect(Number((await owner`select count(*)::int as n from intake_sync.prescriptions where external_id = 'cap-reg'`)[0]?.n)).toBe(0);
  });

  it('parity: the SQL caps are the TypeScript caps, and both find the same first problem', async () => {
    const [caps] = await owner`select intake_sync._api_input_caps() as caps`;
    expect(caps?.caps).toEqual({
      body_bytes: MAX_API_BODY_BYTES,
      free_text: MAX_FREE_TEXT_LENGTH,
      other_text: MAX_IDENTITY_FIELD_LENGTH,
      free_text_keys: [...FREE_TEXT_KEYS],
    });
    const sample = samplePrescription(6, { prefix: 'cap' });
    const cases: unknown[] = [
      sample,
      { ...sample, note: 'é'.repeat(MAX_FREE_TEXT_LENGTH + 1) },
      { ...sample, note: '😀'.repeat(MAX_FREE_TEXT_LENGTH) },
      { ...sample, sig_text: 's'.repeat(MAX_FREE_TEXT_LENGTH + 1), patient: { ...sample.patient, first_name: 'f'.repeat(300) } },
      { ...sample, allergies: [{ adverse_event: { text: 't'.repeat(MAX_FREE_TEXT_LENGTH + 1), code: 'c'.repeat(257) } }] },
      { ...sample, note: 'x'.repeat(MAX_API_BODY_BYTES) },
      'z'.repeat(300),
    ];
    for (const body of cases) {
      const [row] = await owner`select intake_sync._api_input_problem(${JSON.stringify(body)}::text::jsonb, 'prescription') as problem,
                                        (${JSON.stringify(body)}::text::jsonb)::text as text`;
      const ts = apiInputProblem(body, 'prescription', String(row?.text));
      expect(row?.problem ?? null).toEqual(ts ? [ts.field, ts.message, '22001'] : null);
    }
  });
});
