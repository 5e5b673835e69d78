import { describe, expect, test } from 'vitest';
import { isDataError, sqlStateOf } from '../../../src/sync/apply/data-error.js';

const withCode = (code: string) => Object.assign(new Error('server said no'), { code });

describe('isDataError: a refusal the same statement would meet again', () => {
  test.each([
    ['54000', true],
    ['54001', true],
    ['22P02', true],
    ['22P05', true],
    ['22021', true],
    ['22003', true],
    ['23514', true],
    ['23502', true],
    ['40001', false],
    ['40P01', false],
    ['55P03', false],
    ['57014', false],
    ['08006', false],
    ['42501', false],
    ['ECONNRESET', false],
  ])('%s -> %s', (code, expected) => {
    expect(isDataError(withCode(code))).toBe(expected);
  });

  test('the SQLSTATE is found in the cause chain (drizzle wraps the driver error)', () => {
    const wrapped = new Error('Failed query: with cas ...', { cause: withCode('54000') });
    expect(sqlStateOf(wrapped)).toBe('54000');
    expect(isDataError(wrapped)).toBe(true);
    expect(isDataError(new Error('no code'))).toBe(false);
    expect(isDataError('54000')).toBe(false);
  });
});
