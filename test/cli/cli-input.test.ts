import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliUsageError } from '../../src/cli/context/errors.js';
import { parseLimit } from '../../src/cli/commands/events/events.js';
import { prescriptionFileSchema } from '../../src/cli/commands/prescriptions/remote.js';
import { readJsonFile } from '../../src/cli/context/read-json-file.js';
import { subscriptionFileSchema } from '../../src/cli/commands/subscriptions/subscriptions.js';
import { samplePrescription } from '../../src/sandbox/fixtures.js';

const identity = {
  patient_first_name: 'Testpat',
  patient_last_name: 'Synthetic',
  patient_state: 'CA',
  patient_dob: '1980-01-01',
  prescriber_npi: '1689411712',
  written_date: '2024-12-01',
  drug_ndc: '00002015204',
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'intake-cli-input-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function fileWith(name: string, content: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

describe('parseLimit', () => {
  it.each([
    ['1', 1],
    ['250', 250],
    [' 42 ', 42],
  ])('accepts %j', (text, expected) => expect(parseLimit(text)).toBe(expected));

  it.each(['0', '251', '-1', '2.5', 'ten', '', '1e2'])('refuses %j', (text) => {
    expect(() => parseLimit(text)).toThrow(CliUsageError);
  });
});

describe('readJsonFile', () => {
  it('names a missing file', async () => {
    const path = join(dir, 'absent.json');
    await expect(readJsonFile(path, subscriptionFileSchema, 'subscription')).rejects.toThrow(
      `cannot read subscription file ${path}: no such file`,
    );
  });

  it('names a file that is not JSON without quoting it', async () => {
    const path = await fileWith('broken.json', '{"patient_first_name": "Jane"');
    const error = await readJsonFile(path, subscriptionFileSchema, 'subscription').catch((e: Error) => e);
    expect(error).toBeInstanceOf(CliUsageError);
    expect((error as Error).message).toBe(`subscription file ${path} is not valid JSON`);
  });

  it('lists each bad field path and rule, never the values', async () => {
    const bad = {
      ...samplePrescription(1),
      written_date: '2024-13-45',
      patient: { ...samplePrescription(1).patient, primary_phone: '12' },
    };
    const path = await fileWith('bad-rx.json', JSON.stringify({ prescription: bad }));
    const error = (await readJsonFile(path, prescriptionFileSchema, 'prescription').catch((e: Error) => e)) as Error;
    expect(error).toBeInstanceOf(CliUsageError);
    // one problem per line, each naming the file and the field path
    const problems = (error as CliUsageError).problems;
    expect(problems).toHaveLength(2);
    expect(problems).toContain(`prescription file ${path}: written_date: must be a date in YYYY-MM-DD format (nothing sent)`);
    expect(problems.some((p) => p.startsWith(`prescription file ${path}: patient.primary_phone: must be a US phone number`))).toBe(true);
    expect(error.message).not.toContain('2024-13-45');
    expect(error.message).not.toContain(bad.patient.first_name);
  });
});

describe('file shapes', () => {
  it.each([
    ['the POST body', { prescription: samplePrescription(2) }],
    ['the bare prescription', samplePrescription(2)],
  ])('a prescription file may hold %s', (_label, content) => {
    expect(prescriptionFileSchema.parse(content).external_id).toBe('rx-2');
  });

  it.each([
    ['the POST body', { subscription: { prescription_identity: identity, backfill_previous_events: true } }, true],
    ['an identity envelope', { prescription_identity: identity }, undefined],
    ['a bare identity', identity, undefined],
  ])('a subscription file may hold %s', (_label, content, backfill) => {
    const parsed = subscriptionFileSchema.parse(content);
    expect(parsed.prescription_identity.patient_first_name).toBe('Testpat');
    expect(parsed.backfill_previous_events).toBe(backfill);
  });
});
