import { describe, expect, it } from 'vitest';
import { safeFieldPath, sanitizeFieldErrors, sanitizeOperatorText } from '../../src/intake/operator-text.js';

describe('sanitizeOperatorText', () => {
  it.each([
    ['has already been taken', 'has already been taken'],
    ['is required', 'is required'],
    ['must be at most 35 characters', 'must be at most 35 characters'],
    ['request body is not valid JSON', 'request body is not valid JSON'],
    [
      'Iterator has expired: the events it points at are no longer retained',
      'Iterator has expired the events it points at are no longer retained',
    ],
    // values, names (any casing but the vocabulary's), dates, phones and long numbers are dropped
    ['Ada Lovelace is not a valid name', '… is not a valid name'],
    ['1815-12-10 is not a date', '… is not a date'],
    ['phone (555) 867-5309 must be a valid US phone', 'phone … must be a valid US phone'],
    ['call 5558675309 or 555 867 5309', '… or …'],
    ['Long is not allowed', '… is not allowed'],
    ['"will@example.com" is invalid', '… is invalid'],
  ])('%j -> %j', (text, expected) => {
    expect(sanitizeOperatorText(text)).toBe(expected);
  });

  it('is bounded', () => {
    expect(sanitizeOperatorText('is invalid '.repeat(500)).length).toBeLessThanOrEqual(160);
  });
});

describe('safeFieldPath and sanitizeFieldErrors', () => {
  it('keeps the paths of the contract, hides any other key', () => {
    expect(safeFieldPath('prescription.patient.dob')).toBe('prescription.patient.dob');
    expect(safeFieldPath('prescription.medication.ndc')).toBe('prescription.medication.ndc');
    expect(safeFieldPath('Ada Lovelace')).toBe('(field)');
    expect(safeFieldPath('patient.lovelace')).toBe('(field)');
    expect(sanitizeFieldErrors({ 'prescription.external_id': ['has already been taken'], 'Ada Lovelace': 'x', other: 7 })).toEqual({
      'prescription.external_id': ['has already been taken'],
      '(field)': ['…', '(no message)'],
    });
  });
});
