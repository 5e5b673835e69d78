import { describe, expect, test } from 'vitest';
import { identityKey, KEY_SEPARATOR, normaliseDate, normaliseErx } from '../../../src/sync/matching/identity-key.js';
import { identity } from '../../support/sync/fixtures.js';

describe('normaliseDate', () => {
  test.each([
    ['2024-12-10', '2024-12-10'],
    ['  2024-12-10 ', '2024-12-10'],
    ['2024-12-10T15:30:00Z', '2024-12-10'],
    ['2024-12-10T23:30:00-05:00', '2024-12-10'],
    ['2024-12-10T23:30:00.123+0100', '2024-12-10'],
    ['2024-12-10 08:00', '2024-12-10'],
    ['20241210', '2024-12-10'],
    ['12/10/2024', '2024-12-10'],
    ['1/2/2024', '2024-01-02'],
    ['2024-02-29', '2024-02-29'],
    ['0099-01-01', '0099-01-01'],
    ['0000-02-29', '0000-02-29'],
    ['2023-02-29', null],
    ['2024-13-01', null],
    ['2024-04-31', null],
    ['20240230', null],
    ['13/01/2024', null],
    ['2/30/2024', null],
    ['2024-12-10Tgarbage', null],
    ['10 Dec 2024', null],
    ['', null],
    ['2024-1-5', null],
  ])('%j -> %j', (input, expected) => {
    expect(normaliseDate(input)).toBe(expected);
  });
});

describe('normaliseErx', () => {
  test.each([
    ['abc', 'abc'],
    ['  abc ', 'abc'],
    ['', null],
    ['   ', null],
    [null, null],
    [undefined, null],
  ])('%j -> %j', (input, expected) => {
    expect(normaliseErx(input)).toBe(expected);
  });
});

describe('identityKey', () => {
  const base = identityKey(identity());
  test.each([
    ['names differ only in case and surrounding space', { patient_first_name: '  ADA ', patient_last_name: 'lovelace\t' }],
    ['state case', { patient_state: 'ny' }],
    ['dob as MM/DD/YYYY', { patient_dob: '12/10/1990' }],
    ['dob as YYYYMMDD', { patient_dob: '19901210' }],
    ['written_date as timestamp', { written_date: '2024-12-01T10:00:00Z' }],
    ['npi with surrounding space', { prescriber_npi: ' 1234567893 ' }],
    ['ndc with hyphens', { drug_ndc: '00002-0152-04' }],
    ['ndc with spaces', { drug_ndc: '00002 0152 04' }],
    ['erx_message_id is not part of the key', { erx_message_id: 'ERX-1' }],
  ])('equal when %s', (_label, overrides) => {
    expect(identityKey(identity(overrides))).toBe(base);
  });

  test.each([
    ['first name', { patient_first_name: 'Ado' }],
    ['inner whitespace of a name', { patient_last_name: 'Love lace' }],
    ['state', { patient_state: 'NJ' }],
    ['dob', { patient_dob: '1990-12-11' }],
    ['npi', { prescriber_npi: '1245319599' }],
    ['written date', { written_date: '2024-12-02' }],
    ['ndc', { drug_ndc: '00002024304' }],
  ])('differs when %s differs', (_label, overrides) => {
    expect(identityKey(identity(overrides))).not.toBe(base);
  });

  test('an unparseable date falls back to its trimmed lowercased text', () => {
    const a = identityKey(identity({ patient_dob: ' Unknown ' }));
    expect(a).toBe(identityKey(identity({ patient_dob: 'UNKNOWN' })));
    expect(a.split(KEY_SEPARATOR)[3]).toBe('unknown');
  });

  test('field boundaries cannot be shifted between fields', () => {
    const a = identityKey(identity({ patient_first_name: 'ab', patient_last_name: 'c' }));
    const b = identityKey(identity({ patient_first_name: 'a', patient_last_name: 'bc' }));
    expect(a).not.toBe(b);
  });
});
