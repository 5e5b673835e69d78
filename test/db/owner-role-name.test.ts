import { describe, expect, test } from 'vitest';
import { parseOwnerRoleName, quoteIdentifier } from '../../src/db/owner-role-name.js';

describe('parseOwnerRoleName (migrate --reassign-to)', () => {
  test.each(['intake_sync_owner', 'Owner1', '_o', 'vendor-app.owner$', 'a'.repeat(63)])('accepts %s', (name) => {
    expect(parseOwnerRoleName(name)).toBe(name);
  });
  test.each([
    [undefined, /required/],
    ['', /required/],
    ['a'.repeat(64), /at most 63 characters \(got 64\)/],
    ['1owner', /letter or _ first/],
    ['own er', /letter or _ first/],
    ['a"; drop schema x; --', /letter or _ first/],
    ['pg_read_all_data', /pg_ roles/],
  ])('refuses %s, naming --reassign-to', (name, message) => {
    expect(() => parseOwnerRoleName(name)).toThrow(message);
    expect(() => parseOwnerRoleName(name)).toThrow(/^--reassign-to: /);
  });
  test('quoteIdentifier doubles quotes', () => {
    expect(quoteIdentifier('a"b')).toBe('"a""b"');
  });
});
