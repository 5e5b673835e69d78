import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createPrng, randomIndex } from '../../../src/sandbox/prng.js';
import { identityKey, normaliseDate, normaliseErx, type IdentityKeyFields } from '../../../src/sync/matching/identity-key.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { identity } from '../../support/sync/fixtures.js';
import { plainSql, sqlError, type PlainSql } from '../../support/sql-api/plain-sql.js';

// The SQL API computes identity keys in SQL (identity_key(), register_prescription()); the worker
// computes them in TypeScript for every event. They must agree to the byte, so each case goes
// through both and the results are compared. Internal helpers (_normalise_date, _js_lower, ...) are
// called directly only to name which part disagrees.

let tdb: TestDatabase;
let db: PlainSql;

beforeAll(async () => {
  tdb = await createTestDatabase('sql_api_identity_parity');
  db = plainSql(tdb);
}, 60_000);
afterAll(async () => {
  await db.close();
  await tdb.drop();
});

/** Runs `expression` (over `value`) for every input in one statement; the results in input order. */
async function sqlEach(expression: string, inputs: readonly unknown[]): Promise<unknown[]> {
  const rows = await db.query<{ result: unknown }>(
    `select ${expression} as result from jsonb_array_elements($1::text::jsonb) with ordinality as t(value, ord) order by ord`,
    [JSON.stringify(inputs)],
  );
  return rows.map((r) => r.result);
}

const DATES = [
  '2024-12-10',
  '  2024-12-10 ',
  '\u00a02024-12-10\u3000',
  '2024-12-10\n',
  '\ufeff2024-12-10',
  '2024-12-10T15:30:00Z',
  '2024-12-10t15:30:00z',
  '2024-12-10T23:30:00-05:00',
  '2024-12-10T23:30:00.123+0100',
  '2024-12-10T10:00:00+05:30',
  '2024-12-10T10:00+01',
  '2024-12-10 08:00',
  '2024-12-10T08:00:00.5',
  '2024-12-10T25:99',
  '2024-12-10T10:00:00+05:',
  '2024-12-10T10:00:00 +05:00',
  '2024-12-10Z',
  '2024-12-10Tgarbage',
  '2024-12-10T10',
  '20241210',
  '12/10/2024',
  '1/2/2024',
  '01/02/2024',
  '0/1/2024',
  '1/0/2024',
  '123/10/2024',
  '12/10/20245',
  '12/10/24',
  '2024-02-29',
  '2023-02-29',
  '2000-02-29',
  '1900-02-29',
  '2100-02-29',
  '2400-02-29',
  '0000-02-29',
  '00000229',
  '2/29/0000',
  '0004-02-29',
  '0099-01-01',
  '0000-01-01',
  '9999-12-31',
  '2024-04-30',
  '2024-04-31',
  '2024-06-31',
  '2024-12-32',
  '2024-01-00',
  '2024-13-01',
  '2024-00-10',
  '20240230',
  '20241301',
  '13/01/2024',
  '2/30/2024',
  '2/29/2023',
  '2/29/2024',
  '11/31/2024',
  '2024-1-5',
  '2024/12/10',
  '10 Dec 2024',
  'DEC 10 2024',
  'UNKNOWN',
  ' Unknown ',
  '',
  '   ',
  '\t',
  '١٢/١٠/٢٠٢٤',
  '２０２４-１２-１０',
  'İSTANBUL',
  'ΣΕΠ ΔΕΚΑΠΈΝΤΕ',
];

describe('dates: normaliseDate() and _normalise_date()', () => {
  test('every format, invalid days and leap years alike', async () => {
    const sqlDates = await sqlEach(`"intake_sync"."_normalise_date"(value #>> '{}')`, DATES);
    expect(DATES.map((d, i) => [d, sqlDates[i]])).toEqual(DATES.map((d) => [d, normaliseDate(d)]));
  });

  test('0000-02-29 is a day (TypeScript bug fix: Date.UTC read year 0 as 1900)', () => {
    expect(normaliseDate('0000-02-29')).toBe('0000-02-29');
    expect(normaliseDate('00000229')).toBe('0000-02-29');
    expect(normaliseDate('2/29/0000')).toBe('0000-02-29');
    expect(normaliseDate('0000-02-30')).toBeNull();
  });
});

describe('erx ids: normaliseErx() and _normalise_erx()', () => {
  test('blank, whitespace-only, padded and absent', async () => {
    const values = ['ERX-1', '  ERX-1 ', '\u2003ERX-1\u00a0', '', '   ', '\n\t', null];
    const sqlErx = await sqlEach(`"intake_sync"."_normalise_erx"(value #>> '{}')`, values);
    expect(sqlErx).toEqual(values.map((v) => normaliseErx(v)));
  });
});

const NAMES = [
  'Ada',
  '  ADA ',
  'ada\t',
  '\ufeffAda',
  '\u00a0Zoë\u2003',
  'A\u200bda',
  'A\u0085',
  'ÉLODIE',
  'E\u0301lodie',
  'Å',
  'A\u030a',
  '\u212b',
  'ΟΔΟΣ',
  'ΣΊΣΥΦΟΣ',
  'Σ',
  'ΑΣ.',
  "Α'Σ",
  'ΑΣ\u0301',
  'ΑΣ\u0301Α',
  '\u0345Σ',
  'ΑΣΣ',
  'Σ-Σ',
  'ΑΣ1',
  'İlkay',
  'ISTANBUL',
  'ǅemal',
  'Ǆ',
  'ß',
  'Straße',
  'ẞ',
  'ﬁ',
  'ﬀ',
  'K',
  'Ⅻ',
  'Ⓐ',
  '😀',
  '𐐀',
  'Ꭰ',
  'Ა',
  'Ǉ',
  'ŉ',
  'ǰ',
  'ᾳ',
  'ᾼ',
  'ı',
  'ſ',
  'µ',
  'ÿ',
  'Ω',
  'ẞß',
  'Mc\u00adDonald',
];

describe('identity_key() and identityKey()', () => {
  const cases: Array<[string, IdentityKeyFields]> = [
    ['the fixture', identity()],
    ...DATES.map((d): [string, IdentityKeyFields] => [`dates ${JSON.stringify(d)}`, identity({ patient_dob: d, written_date: d })]),
    ...NAMES.map((n): [string, IdentityKeyFields] => [
      `names ${JSON.stringify(n)}`,
      identity({ patient_first_name: n, patient_last_name: `x${n}x` }),
    ]),
    ...NAMES.map((n): [string, IdentityKeyFields] => [`state ${JSON.stringify(n)}`, identity({ patient_state: n })]),
    ...['ny', ' Ny ', '\tNY\n', 'nY\u3000'].map((s): [string, IdentityKeyFields] => [
      `state ${JSON.stringify(s)}`,
      identity({ patient_state: s }),
    ]),
    ...[' 1234567893 ', '\t1234567893\n', '\u20281234567893', '12345 67893', 'abc'].map((v): [string, IdentityKeyFields] => [
      `npi ${JSON.stringify(v)}`,
      identity({ prescriber_npi: v }),
    ]),
    ...[
      '00002-0152-04',
      '00002 0152 04',
      '00002\u00a00152\u200304',
      ' 00002015204 ',
      '0000–2015204',
      '00002\t015204',
      '--',
      '\u2028',
      'AbC-d',
    ].map((v): [string, IdentityKeyFields] => [`ndc ${JSON.stringify(v)}`, identity({ drug_ndc: v })]),
    ['erx is not part of the key', identity({ erx_message_id: ' ERX-1 ' })],
    ['unknown keys are ignored', { ...identity(), extra: { nested: true } }],
  ];

  test('every case gives the same key', async () => {
    const sqlKeys = await sqlEach(
      `"intake_sync".identity_key(value)`,
      cases.map(([, v]) => v),
    );
    const tsKeys = cases.map(([, v]) => identityKey(v));
    expect(cases.map(([label], i) => [label, sqlKeys[i]])).toEqual(cases.map(([label], i) => [label, tsKeys[i]]));
  });

  test('random strings of awkward characters give the same key', async () => {
    // sigma next to cased, case-ignorable and other characters; composing marks; whitespace at the ends
    const alphabet = [..."ΣσςΑα.'\u0301\u0345\u00ad İıiI ßẞǅ\u00a0\u3000\ufeffE\u0301É\u212bÅ-1😀𐐀\u200b\u2028"];
    const random = createPrng(9);
    const word = () => Array.from({ length: 1 + randomIndex(random, 8) }, () => alphabet[randomIndex(random, alphabet.length)]).join('');
    const identities = Array.from({ length: 2000 }, () =>
      identity({ patient_first_name: word(), patient_last_name: word(), patient_state: word(), patient_dob: word(), drug_ndc: word() }),
    );
    const sqlKeys = await sqlEach(`"intake_sync".identity_key(value)`, identities);
    const mismatches = identities.filter((id, i) => sqlKeys[i] !== identityKey(id));
    expect(mismatches).toEqual([]);
  });
});

/** Every Unicode scalar value except U+0000 (text cannot hold it), in chunks one statement each can take. */
function* codePointChunks(exclude: ReadonlySet<number> = new Set()): Generator<number[]> {
  let chunk: number[] = [];
  for (let c = 1; c <= 0x10ffff; c++) {
    if ((c >= 0xd800 && c <= 0xdfff) || exclude.has(c)) continue;
    chunk.push(c);
    if (chunk.length === 50_000) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk;
}

const hexOf = (c: number) => `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;

describe('every code point', () => {
  test('whitespace: what _js_trim() removes is what trim() removes', async () => {
    const sqlWhitespace: number[] = [];
    const jsWhitespace: number[] = [];
    for (const chunk of codePointChunks()) {
      const rows = await db.query<{ c: number }>(
        `select ascii(ch) as c from regexp_split_to_table($1, '') as ch where "intake_sync"."_js_trim"(ch) = ''`,
        [String.fromCodePoint(...chunk)],
      );
      sqlWhitespace.push(...rows.map((r) => Number(r.c)));
      jsWhitespace.push(...chunk.filter((c) => String.fromCodePoint(c).trim() === ''));
    }
    expect(sqlWhitespace.map(hexOf)).toEqual(jsWhitespace.map(hexOf));
  }, 60_000);

  // capital sigma is the one context-dependent mapping: the random strings above cover it
  test.each([
    ['lower', '_js_lower', (s: string) => s.toLowerCase()],
    ['upper', '_js_upper', (s: string) => s.toUpperCase()],
  ] as const)(
    '%s: each one maps as in JavaScript',
    async (_label, fn, convert) => {
      const mismatches: string[] = [];
      for (const chunk of codePointChunks(new Set([0x03a3]))) {
        // separated by a tab, so that the results can be split back per code point
        const text = chunk.map((c) => String.fromCodePoint(c)).join('\t');
        const [row] = await db.query<{ result: string }>(`select "intake_sync"."${fn}"($1) as result`, [text]);
        const got = (row?.result ?? '').split('\t');
        const want = convert(text).split('\t');
        chunk.forEach((c, i) => {
          if (got[i] !== want[i]) mismatches.push(`${hexOf(c)}: sql ${JSON.stringify(got[i])}, js ${JSON.stringify(want[i])}`);
        });
      }
      expect(mismatches).toEqual([]);
    },
    60_000,
  );

  test('NFC: each one alone normalises as in JavaScript', async () => {
    const mismatches: string[] = [];
    for (const chunk of codePointChunks()) {
      // a space after each keeps compositions within one code point's decomposition
      const text = chunk.map((c) => String.fromCodePoint(c)).join(' ');
      const [row] = await db.query<{ result: string }>('select normalize($1, NFC) as result', [text]);
      const got = (row?.result ?? '').split(' ');
      const want = text.normalize('NFC').split(' ');
      chunk.forEach((c, i) => {
        if (got[i] !== want[i]) mismatches.push(hexOf(c));
      });
    }
    expect(mismatches).toEqual([]);
  }, 60_000);

  test('NFC: combining marks reorder as in JavaScript, except marks newer than the server knows', async () => {
    // marks of canonical combining classes 1, 7, 9, 202, 216, 220, 230, 232, 233, 240, each before and after every mark
    const probes = ['\u0334', '\u093c', '\u094d', '\u0327', '\u031b', '\u0316', '\u0301', '\u0315', '\u035c', '\u0345'];
    const marks: number[] = [];
    for (let c = 0x300; c <= 0x10ffff; c++) if ((c < 0xd800 || c > 0xdfff) && /\p{M}/u.test(String.fromCodePoint(c))) marks.push(c);
    const pairs = marks.flatMap((m) =>
      probes.flatMap(
        (p) =>
          [
            [m, `a${String.fromCodePoint(m)}${p}`],
            [m, `a${p}${String.fromCodePoint(m)}`],
          ] as const,
      ),
    );
    const text = pairs.map(([, s]) => s).join(' ');
    const [row] = await db.query<{ result: string }>('select normalize($1, NFC) as result', [text]);
    const got = (row?.result ?? '').split(' ');
    const want = text.normalize('NFC').split(' ');
    const differing = [...new Set(pairs.filter((_, i) => got[i] !== want[i]).map(([m]) => m))];
    // Postgres normalises with the Unicode tables it was built with (PostgreSQL 15: Unicode 14), Node
    // with its ICU's (Node 20.20: Unicode 17). A mark the server does not know has combining class 0
    // there: it is not reordered. Such names cannot be made to agree short of NFC in SQL; the
    // documented limitation is exactly this, and no other difference is tolerated.
    const unknownToServer = await db.query<{ m: number }>(
      `select m from unnest($1::int[]) as m
        where (select bool_and(normalize(s, NFD) = s) from unnest(array[
          'a' || chr(m) || U&'\\0316', 'a' || U&'\\0316' || chr(m), 'a' || chr(m) || U&'\\0301', 'a' || U&'\\0301' || chr(m)]) as s)`,
      [`{${differing.join(',')}}`],
    );
    expect(differing.map(hexOf)).toEqual(unknownToServer.map((r) => hexOf(Number(r.m))));
  }, 60_000);
});

describe('identity_key() validation (the table is in validation.parity.test.ts)', () => {
  test('a missing or mistyped field raises naming it', async () => {
    const error = await sqlError(
      db.query(`select "intake_sync".identity_key($1::text::jsonb)`, [JSON.stringify({ ...identity(), patient_dob: 19901210 })]),
    );
    expect(error).toEqual({ code: '22023', message: 'identity.patient_dob: must be a string' });
  });
});
