import { describe, expect, test } from 'vitest';
import { ATTRIBUTION_PATTERN, attributionOf, osActor } from '../../src/db/audit.js';

describe('attributionOf: what a caller may put in on_behalf_of', () => {
  test.each([
    ['alice@ops-1', 'alice@ops-1'],
    ['nurse-7@ward-3', 'nurse-7@ward-3'],
    ['svc:app+1.x_y', 'svc:app+1.x_y'],
    ['CORP\\alice@PC 12', 'CORP_alice@PC_12'],
    ['zoë@host', 'zo_@host'],
    ['x\n2026-01-01 purge.run clinic-b', 'x_2026-01-01_purge.run_clinic-b'],
    ['\u001b[31m', '__31m'],
    ['', 'unknown'],
  ])('%j -> %j', (input, expected) => {
    expect(attributionOf(input)).toBe(expected);
    expect(attributionOf(input)).toMatch(ATTRIBUTION_PATTERN);
  });

  test('at most 128 characters', () => {
    expect(attributionOf('a'.repeat(300))).toBe('a'.repeat(128));
  });

  test("this process's own user@host always passes", () => {
    expect(osActor()).toMatch(ATTRIBUTION_PATTERN);
  });
});
