import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { queryRows, type Database } from '../../../src/db/connection.js';
import { schemaIssuesFrom } from '../../../src/intake/errors/schema-issues.js';
import { prescriptionRequestSchema } from '../../../src/intake/prescription.js';
import { samplePrescription } from '../../../src/sandbox/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';

// The SQL validator (0004_api_outbox.sql) and the client's zod schema must accept and refuse the
// same prescriptions and name the same first field. One table, both validators.

type Json = Record<string, unknown>;
type Edit = (p: Json) => unknown;

const base = (): Json => JSON.parse(JSON.stringify(samplePrescription(7, { prefix: 'parity' }))) as Json;

/** Sets (or with `undefined`, deletes) the value at a dotted path of a fresh base prescription. */
function at(path: string, value: unknown): Edit {
  return (p) => {
    const keys = path.split('.');
    let node = p as Json;
    for (const key of keys.slice(0, -1)) {
      node[key] ??= {};
      node = node[key] as Json;
    }
    const last = keys[keys.length - 1] as string;
    if (value === undefined) delete node[last];
    else node[last] = value;
    return p;
  };
}
const whole =
  (value: unknown): Edit =>
  () =>
    value;
const both =
  (...edits: Edit[]): Edit =>
  (p) =>
    edits.reduce<unknown>((acc, edit) => edit(acc as Json), p);

const allergy = {
  source_of_information: 'P',
  effective_date: null,
  adverse_event: { text: 'rash', code: null },
  drug_product: { code: null, text: 'x' },
};
const diagnosis = { primary_icd10_code: 'E11.9', primary_icd10_description: 'Type 2 diabetes' };

const CASES: Array<[string, Edit]> = [
  ['the fixture as is', (p) => p],
  ['allergies empty', at('allergies', [])],
  ['allergies null', at('allergies', null)],
  ['allergies omitted', at('allergies', undefined)],
  ['one full allergy', at('allergies', [{ ...allergy, severity: { code: 'x', text: 'mild' } }])],
  ['unknown keys are stripped, not refused', at('extra', { a: 1 })],
  ['optional strings omitted', both(at('sig_text', undefined), at('note', undefined), at('originating_entity', undefined))],
  ['padded external_id', at('external_id', '  rx-1 ')],
  ['leap day', at('written_date', '2024-02-29')],
  ['email with plus and subdomain', at('patient.email', 'a.b+c@mail.ex-ample.co')],
  ['email apostrophe', at('patient.email', "o'hara@example.org")],
  ['phone +1 with spaces', at('patient.primary_phone', '+1 212 555 0100')],
  ['phone 1- prefix', at('patient.primary_phone', '1-212-555-0100')],
  ['phone parentheses', at('patient.primary_phone', '(212) 555-0100')],
  ['phone with a no-break space', at('patient.primary_phone', '\u00a0212.555.0100')],
  ['days_supply null', at('medication.days_supply', null)],
  ['days_supply omitted', at('medication.days_supply', undefined)],
  ['number_of_refills 2.0', at('number_of_refills', 2.0)],
  [
    'diagnosis with both secondaries',
    at('medication.diagnosis', { ...diagnosis, secondary_icd10_code: 'I10', secondary_icd10_description: 'Hypertension' }),
  ],
  [
    'diagnosis with empty secondaries',
    at('medication.diagnosis', { ...diagnosis, secondary_icd10_code: '', secondary_icd10_description: null }),
  ],
  ['prescriber sample address', at('prescriber.address', { address1: '1 Main St', city: 'Albany', state: 'NY', zip: '12207' })],
  ['fax given', at('prescriber.fax', '212-555-0199')],
  // refused
  ['not an object: string', whole('rx')],
  ['not an object: array', whole([])],
  ['null prescription', whole(null)],
  ['external_id missing', at('external_id', undefined)],
  ['external_id empty', at('external_id', '')],
  ['external_id blank', at('external_id', '   ')],
  ['external_id ideographic space', at('external_id', '\u3000')],
  ['external_id a number', at('external_id', 5)],
  ['written_date Feb 30', at('written_date', '2024-02-30')],
  ['written_date not leap', at('written_date', '2023-02-29')],
  ['written_date short form', at('written_date', '2024-2-1')],
  ['written_date year 99', at('written_date', '0099-01-01')],
  ['written_date month 13', at('written_date', '2024-13-01')],
  ['written_date month 00', at('written_date', '2024-00-10')],
  ['written_date a number', at('written_date', 20240101)],
  ['written_date with a newline', at('written_date', '2024-01-01\n')],
  ['refills negative', at('number_of_refills', -1)],
  ['refills fractional', at('number_of_refills', 1.5)],
  ['refills a string', at('number_of_refills', '1')],
  ['refills null', at('number_of_refills', null)],
  ['refills beyond safe integers', at('number_of_refills', 1e20)],
  ['substitutions 10', at('substitutions', 10)],
  ['sig_text null (optional, not nullable)', at('sig_text', null)],
  ['note a number', at('note', 5)],
  ['patient missing', at('patient', undefined)],
  ['patient an array', at('patient', [])],
  ['first_name empty', at('patient.first_name', '')],
  ['gender lower case', at('patient.gender', 'm')],
  ['dob bad', at('patient.dob', '1990-02-31')],
  ['phone too short', at('patient.primary_phone', '123')],
  ['phone +2', at('patient.primary_phone', '+2 212 555 0100')],
  ['phone extension', at('patient.primary_phone', '212-555-0100 x5')],
  ['phone area code 1xx', at('patient.primary_phone', '112-555-0100')],
  ['phone exchange 0xx', at('patient.primary_phone', '212-055-0100')],
  ['phone letters', at('patient.primary_phone', 'abc')],
  ['email without a dot domain', at('patient.email', 'a@b')],
  ['email leading dot', at('patient.email', '.a@b.co')],
  ['email double dot', at('patient.email', 'a..b@c.co')],
  ['email one-letter TLD', at('patient.email', 'a@b.c')],
  ['email non-ASCII', at('patient.email', 'ü@x.co')],
  ['address missing', at('patient.address', undefined)],
  ['state unknown', at('patient.address.state', 'XX')],
  ['state lower case', at('patient.address.state', 'ny')],
  ['zip four digits', at('patient.address.zip', '1234')],
  ['zip a number', at('patient.address.zip', 10001)],
  ['address2 a number', at('patient.address.address2', 5)],
  ['city blank', at('patient.address.city', ' \t')],
  ['ndc hyphenated', at('medication.ndc', '00002-0152-04')],
  ['ndc unknown', at('medication.ndc', '12345678901')],
  ['quantity a number', at('medication.quantity', 30)],
  ['days_supply 0', at('medication.days_supply', 0)],
  ['diagnosis null (optional, not nullable)', at('medication.diagnosis', null)],
  ['diagnosis code only', at('medication.diagnosis', { ...diagnosis, secondary_icd10_code: 'I10' })],
  ['diagnosis description only', at('medication.diagnosis', { ...diagnosis, secondary_icd10_description: 'Hypertension' })],
  ['diagnosis primary empty', at('medication.diagnosis', { ...diagnosis, primary_icd10_code: '' })],
  ['npi bad check digit', at('prescriber.npi', '1234567890')],
  ['npi a number', at('prescriber.npi', 1689411712)],
  ['npi nine digits', at('prescriber.npi', '168941171')],
  ['prescriber fax bad', at('prescriber.fax', '123')],
  ['prescriber first_name null (optional)', at('prescriber.first_name', null)],
  ['prescriber address empty', at('prescriber.address', {})],
  ['prescriber missing', at('prescriber', undefined)],
  ['pharmacy npi another valid NPI', at('pharmacy.npi', '1234567893')],
  ['pharmacy ncpdpid wrong', at('pharmacy.ncpdpid', '1')],
  ['pharmacy phone missing', at('pharmacy.primary_phone', undefined)],
  ['allergies a string', at('allergies', 'none')],
  ['allergies [null]', at('allergies', [null])],
  ['allergies [{}]', at('allergies', [{}])],
  ['second allergy bad source', at('allergies', [allergy, { ...allergy, source_of_information: 'X' }])],
  ['allergy adverse_event text empty', at('allergies', [{ ...allergy, adverse_event: { text: '' } }])],
  ['allergy severity null (optional)', at('allergies', [{ ...allergy, severity: null }])],
  ['allergy drug_product missing', at('allergies', [{ ...allergy, drug_product: undefined }])],
  ['two problems: the first is named', both(at('written_date', 'x'), at('prescriber.npi', '1'))],
];

let tdb: TestDatabase;
let database: Database;

beforeAll(async () => {
  tdb = await createTestDatabase('outbox_parity');
  database = tdb.database;
});
afterAll(async () => {
  await tdb.drop();
});

function zodVerdict(value: unknown): { ok: boolean; first: string | null; paths: string[] } {
  const parsed = prescriptionRequestSchema.safeParse(value);
  if (parsed.success) return { ok: true, first: null, paths: [] };
  const paths = schemaIssuesFrom(parsed.error).map((i) => (i.path === '(body)' ? 'prescription' : `prescription.${i.path}`));
  return { ok: false, first: paths[0] ?? null, paths };
}

describe('the SQL validator agrees with the zod schema', () => {
  test('same accept/reject and the same first failing path, case by case', async () => {
    // JSON round trip: both sides see exactly what a vendor's JSON would carry
    const inputs = CASES.map(([, edit]) => JSON.parse(JSON.stringify(edit(base()) ?? null)) as unknown);
    const rows = await queryRows<{ ord: string; problem: string[] | null }>(
      database.db,
      sql`select c.ord, to_jsonb(${database.names.qualified('_prescription_problem')}(c.value)) as problem
          from jsonb_array_elements(${JSON.stringify(inputs)}::jsonb) with ordinality as c(value, ord) order by c.ord`,
    );
    const disagreements: string[] = [];
    CASES.forEach(([name], index) => {
      const zod = zodVerdict(inputs[index]);
      const problem = rows[index]?.problem ?? null;
      const sqlPath = problem?.[0] ?? null;
      if (zod.ok !== (problem === null)) {
        disagreements.push(
          `${name}: zod ${zod.ok ? 'accepts' : `refuses (${zod.paths.join(', ')})`}, SQL ${problem ? `refuses (${sqlPath})` : 'accepts'}`,
        );
      } else if (!zod.ok && sqlPath !== zod.first) {
        disagreements.push(`${name}: zod's first issue ${zod.first}, SQL names ${sqlPath}`);
      }
    });
    expect(disagreements).toEqual([]);
    // the table exercises both outcomes
    expect(rows.filter((r) => r.problem === null).length).toBeGreaterThan(15);
    expect(rows.filter((r) => r.problem !== null).length).toBeGreaterThan(60);
  });

  test('a missing or null required field is SQLSTATE 23502, any other problem 22023', async () => {
    const rows = await queryRows<{ missing: string[]; wrong: string[] }>(
      database.db,
      sql`select to_jsonb(${database.names.qualified('_prescription_problem')}(${JSON.stringify(at('patient.dob', undefined)(base()))}::jsonb)) as missing,
                 to_jsonb(${database.names.qualified('_prescription_problem')}(${JSON.stringify(at('patient.dob', '1990-13-01')(base()))}::jsonb)) as wrong`,
    );
    expect(rows[0]?.missing).toEqual(['prescription.patient.dob', 'is required', '23502']);
    expect(rows[0]?.wrong).toEqual(['prescription.patient.dob', 'must be a date in YYYY-MM-DD format', '22023']);
  });
});
