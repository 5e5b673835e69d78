import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parsePrescriptionImport, readPrescriptionImport } from '../../../../src/cli/commands/prescriptions/import-file.js';
import { identity } from '../../../support/sync/fixtures.js';

const line = (value: unknown) => JSON.stringify(value);

describe('parsePrescriptionImport', () => {
  const text = [
    line({ external_id: 'rx-1', prescription_identity: identity() }),
    '',
    '   ',
    line({ external_id: 'rx-2', prescription_identity: { ...identity(), prescriber_npi: '1234567890' } }),
    '{"external_id": "rx-3", "prescription_identity": {"patient_first_name": "Ada"',
    line({ external_id: '', prescription_identity: identity() }),
    line({ external_id: 'rx-4', prescription_identity: { ...identity(), patient_last_name: undefined } }),
    line(['not', 'an', 'object']),
    line({ external_id: 'rx-1', prescription_identity: identity() }),
    line({ external_id: 'rx-5', prescription_identity: identity({ erx_message_id: 'E5' }) }),
  ].join('\r\n');

  test('good lines are kept with their line numbers', () => {
    const { good } = parsePrescriptionImport(text);
    expect(good.map((g) => [g.line, g.external_id])).toEqual([
      [1, 'rx-1'],
      [10, 'rx-5'],
    ]);
    expect(good[1]?.prescription_identity.erx_message_id).toBe('E5');
  });

  test.each([
    [4, /^prescription_identity\.prescriber_npi: must be a 10-digit NPI/],
    [5, /^not valid JSON$/],
    [6, /^external_id: must not be empty/],
    [7, /^prescription_identity\.patient_last_name: /],
    [8, /^\(line\): /],
    [9, /^external_id: repeats line 1$/],
  ])('line %i is reported', (lineNumber, error) => {
    const { bad } = parsePrescriptionImport(text);
    expect(bad.find((b) => b.line === lineNumber)?.error).toMatch(error);
  });

  test('only those lines are bad, and no value leaks into an error', () => {
    const { bad } = parsePrescriptionImport(text);
    expect(bad.map((b) => b.line)).toEqual([4, 5, 6, 7, 8, 9]);
    for (const b of bad) for (const value of ['Ada', 'Lovelace', '1234567890']) expect(b.error).not.toContain(value);
  });

  test('reads a file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'import-'));
    try {
      const path = join(dir, 'rx.ndjson');
      await writeFile(path, `${line({ external_id: 'rx-1', prescription_identity: identity() })}\n`);
      expect(await readPrescriptionImport(path)).toMatchObject({ good: [{ line: 1, external_id: 'rx-1' }], bad: [] });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
