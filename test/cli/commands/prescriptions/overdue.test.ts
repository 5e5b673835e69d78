import { describe, expect, test } from 'vitest';
import { escapeControl, overdueText } from '../../../../src/cli/commands/prescriptions/overdue.js';

describe('prescriptions overdue output', () => {
  test('escapes control characters of stored identifiers', () => {
    expect(escapeControl('rx-1\u001b[2J\n\u0085')).toBe('rx-1\\u001b[2J\\u000a\\u0085');
    expect(escapeControl('rx-ordinary')).toBe('rx-ordinary');
  });
  test('prints how long overdue in the largest two units', () => {
    expect(overdueText(59)).toBe('0m');
    expect(overdueText(3_900)).toBe('1h 5m');
    expect(overdueText(2 * 86_400 + 7_200)).toBe('2d 2h');
  });
});
