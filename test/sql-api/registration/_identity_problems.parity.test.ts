import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { z } from 'zod';
import { prescriptionIdentitySchema } from '../../../src/intake/identity.js';
import { importLineSchema } from '../../../src/cli/commands/prescriptions/import-file.js';
import { registerLocalPrescriptions } from '../../../src/sync/matching/local-prescriptions.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { identity, truncateStore } from '../../support/sync/fixtures.js';
import { plainSql, sqlError, type PlainSql } from '../../support/sql-api/plain-sql.js';

// The SQL functions validate what the zod schemas validate: identity_key() as
// prescriptionIdentitySchema (events' identities: strings where strings are required),
// register_prescription() as a line of `prescriptions import` (importLineSchema: also not blank,
// a valid NPI). One table of inputs goes through both sides; accept/reject and the paths named
// must be the same, in the same order.

let tdb: TestDatabase;
let db: PlainSql;

beforeAll(async () => {
  tdb = await createTestDatabase('sql_api_validation_parity');
  db = plainSql(tdb);
});
afterAll(async () => {
  await db.close();
  await tdb.drop();
});

const ABSENT = Symbol('absent');
type Field = keyof ReturnType<typeof identity>;
const REQUIRED: Field[] = [
  'patient_first_name',
  'patient_last_name',
  'patient_state',
  'patient_dob',
  'prescriber_npi',
  'written_date',
  'drug_ndc',
];

/** The fixture identity with one field replaced (ABSENT deletes it). */
function withField(field: string, value: unknown): Record<string, unknown> {
  const result: Record<string, unknown> = { ...identity() };
  if (value === ABSENT) delete result[field];
  else result[field] = value;
  return result;
}

/** `identity` as SQL receives it: undefined is SQL NULL, anything else its JSON text. */
const IDENTITIES: Array<[string, unknown]> = [
  ['the fixture', identity()],
  ['an unknown key', { ...identity(), extra: [1] }],
  ['SQL NULL', undefined],
  ['JSON null', null],
  ['an array', [identity()]],
  ['a string', 'Ada Lovelace'],
  ['a number', 7],
  ['an empty object', {}],
  ...REQUIRED.flatMap((field) =>
    (
      [
        ['absent', ABSENT],
        ['null', null],
        ['a number', 1234567893],
        ['true', true],
        ['an object', {}],
        ['an array', ['x']],
        ['empty', ''],
        ['spaces', '   '],
        ['U+3000 only', '\u3000'],
        ['U+0085 only (not JS whitespace)', '\u0085'],
        ['padded', ' x '],
      ] as const
    ).map(([label, value]): [string, unknown] => [`${field} ${label}`, withField(field, value)]),
  ),
  ...(
    [
      ['absent', ABSENT],
      ['null', null],
      ['empty', ''],
      ['spaces', ' '],
      ['a string', 'ERX-1'],
      ['a number', 5],
      ['true', true],
      ['an object', {}],
      ['an array', []],
    ] as const
  ).map(([label, value]): [string, unknown] => [`erx_message_id ${label}`, withField('erx_message_id', value)]),
  ...['1234567893', '1234567890', ' 1234567893', '1234567893\n', '123456789', '12345678930', '١٢٣٤٥٦٧٨٩٣', '12345-7893'].map(
    (npi): [string, unknown] => [`prescriber_npi ${JSON.stringify(npi)}`, withField('prescriber_npi', npi)],
  ),
  ['several problems at once', { patient_last_name: 4, patient_state: '', erx_message_id: 1, prescriber_npi: '1', drug_ndc: null }],
];

const EXTERNAL_IDS: Array<[string, string | undefined]> = [
  ['rx-1', 'rx-1'],
  ['padded', ' rx-1 '],
  ['empty', ''],
  ['spaces', '  '],
  ['U+00A0 only', '\u00a0'],
  ['SQL NULL', undefined],
];

/** zod's verdict as the paths of its issues, named as the SQL parameters are: `identity.<field>`. */
function zodPaths(schema: z.ZodType, input: unknown, rename: Record<string, string> = {}): string[] {
  const parsed = schema.safeParse(input);
  if (parsed.success) return [];
  return parsed.error.issues.map((issue) => {
    const path = issue.path.map(String);
    if (path[0] !== undefined && rename[path[0]] !== undefined) path[0] = rename[path[0]] as string;
    return path.join('.');
  });
}

/** The SQL function's verdict: the paths its message names, in order (none when it accepted). */
async function sqlPaths(statement: Promise<unknown>): Promise<string[]> {
  try {
    await statement;
    return [];
  } catch (error) {
    const { code, message } = error as { code: string; message: string };
    // a missing required value is 23502, anything else malformed 22023
    expect(['22023', '23502']).toContain(code);
    expect(code === '23502').toBe(message.split('; ').some((p) => p.endsWith(': required')));
    return message.split('; ').map((problem) => problem.slice(0, problem.indexOf(': ')));
  }
}

const jsonText = (value: unknown) => (value === undefined ? null : JSON.stringify(value));
const ROLLBACK = new Error('rollback');

describe('identity_key() validates as prescriptionIdentitySchema', () => {
  test('the same inputs are accepted and the same fields named', async () => {
    const sqlVerdicts: Array<[string, string[]]> = [];
    for (const [label, value] of IDENTITIES) {
      sqlVerdicts.push([label, await sqlPaths(db.query(`select "intake_sync".identity_key($1::text::jsonb)`, [jsonText(value)]))]);
    }
    const zodVerdicts = IDENTITIES.map(([label, value]): [string, string[]] => [
      label,
      zodPaths(prescriptionIdentitySchema, value).map((p) => (p ? `identity.${p}` : 'identity')),
    ]);
    expect(sqlVerdicts).toEqual(zodVerdicts);
  });
});

describe('register_prescription() validates as `prescriptions import`', () => {
  const cases = [
    ...IDENTITIES.map(([label, value]): [string, string | undefined, unknown] => [`identity: ${label}`, 'rx-1', value]),
    ...EXTERNAL_IDS.map(([label, externalId]): [string, string | undefined, unknown] => [`external_id: ${label}`, externalId, identity()]),
    ['both wrong', '', { ...identity(), patient_dob: 1 }],
  ] satisfies Array<[string, string | undefined, unknown]>;

  test('the same inputs are accepted and the same fields named', async () => {
    const sqlVerdicts: Array<[string, string[]]> = [];
    for (const [label, externalId, value] of cases) {
      const attempt = db.transaction(async (query) => {
        await query(`select * from "intake_sync".register_prescription($1::text, $2::text::jsonb)`, [externalId ?? null, jsonText(value)]);
        throw ROLLBACK;
      });
      const paths = await sqlPaths(attempt.catch((error: unknown) => (error === ROLLBACK ? undefined : Promise.reject(error))));
      sqlVerdicts.push([label, paths]);
    }
    const zodVerdicts = cases.map(([label, externalId, value]): [string, string[]] => [
      label,
      zodPaths(importLineSchema, { external_id: externalId, prescription_identity: value }, { prescription_identity: 'identity' }),
    ]);
    expect(sqlVerdicts).toEqual(zodVerdicts);
  });
});

describe('what register_prescription() stores', () => {
  beforeEach(async () => {
    await truncateStore(tdb.database.db);
  });

  const COLUMNS = `external_id, patient_first_name, patient_last_name, patient_state, patient_dob, prescriber_npi, written_date, drug_ndc,
    erx_message_id, identity_key, status, status_rank, subscription_id, cancellation_requested_at`;
  const stored = () => db.query(`select ${COLUMNS} from "intake_sync"."prescriptions" order by external_id`);

  test('is what `prescriptions import` stores for the same line', async () => {
    const lines = [
      {
        external_id: ' rx-padded ',
        prescription_identity: identity({
          patient_first_name: '\u00a0 Ada\u3000',
          patient_last_name: ' LOVELACE\t',
          patient_state: ' ny ',
        }),
      },
      {
        external_id: 'rx-dates',
        prescription_identity: identity({
          patient_dob: ' 12/10/1990 ',
          written_date: '2024-12-01T10:00:00Z ',
          drug_ndc: ' 00002-0152-04 ',
        }),
      },
      { external_id: 'rx-erx', prescription_identity: identity({ erx_message_id: '  ERX-1 ' }) },
      { external_id: 'rx-blank-erx', prescription_identity: identity({ erx_message_id: ' ' }) },
      { external_id: 'rx-unicode', prescription_identity: identity({ patient_first_name: 'E\u0301LODIE', patient_last_name: 'ΟΔΟΣ' }) },
    ];
    const parsed = lines.map((line) => importLineSchema.parse(line));
    await registerLocalPrescriptions(tdb.database.db, parsed);
    const byImport = await stored();
    await truncateStore(tdb.database.db);
    for (const line of lines) {
      await db.query(`select * from "intake_sync".register_prescription($1::text, $2::text::jsonb)`, [
        line.external_id,
        JSON.stringify(line.prescription_identity),
      ]);
    }
    expect(await stored()).toEqual(byImport);
  });

  test('a rejected registration raises before it writes', async () => {
    const error = await sqlError(
      db.query(`select * from "intake_sync".register_prescription($1::text, $2::text::jsonb)`, [
        'rx-1',
        JSON.stringify(withField('patient_last_name', ABSENT)),
      ]),
    );
    expect(error).toEqual({ code: '23502', message: 'identity.patient_last_name: required' });
    expect(await stored()).toEqual([]);
  });
});
