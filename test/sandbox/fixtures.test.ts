import { describe, expect, it } from 'vitest';
import { prescriptionRequestSchema } from '../../src/intake/index.js';
import { compositeKey } from '../../src/sandbox/identity-match.js';
import { identityOf, sampleIdentity, samplePrescription, seedRejects } from '../../src/sandbox/fixtures.js';
import { takesRejectionPath } from '../../src/sandbox/rules.js';

describe('fixtures', () => {
  it.each([0, 1, 25, 26, 675, 676, 9_999, 249_999, 1_000_000])(
    'samplePrescription(%i) is valid, deterministic and matches sampleIdentity',
    (i) => {
      for (const rejected of [false, true]) {
        const request = samplePrescription(i, { prefix: 'p', rejected });
        expect(prescriptionRequestSchema.safeParse(request).success).toBe(true);
        expect(request.external_id).toBe(`p-${i}`);
        expect(samplePrescription(i, { prefix: 'p', rejected })).toEqual(request);
        expect(identityOf(request)).toEqual(sampleIdentity(i));
        expect(takesRejectionPath(request.patient, request.prescriber)).toBe(rejected);
      }
      expect(samplePrescription(i).external_id).toBe(`rx-${i}`);
    },
  );

  it('composite identities are unique across 20,000 indices', () => {
    const keys = new Set<string>();
    for (let i = 0; i < 20_000; i++) keys.add(compositeKey(sampleIdentity(i)));
    expect(keys.size).toBe(20_000);
  });

  it.each([
    [0, 3, false],
    [1, 3, false],
    [2, 3, true],
    [5, 3, true],
    [4, undefined, false],
    [4, 0, false],
    [0, 1, true],
  ])('seedRejects(%i, %s) → %s', (i, every, expected) => {
    expect(seedRejects(i, every)).toBe(expected);
  });
});
