import { describe, expect, test } from 'vitest';
import { resetTarget } from '../../../../src/cli/commands/checkpoint/checkpoint.js';

describe('checkpoint reset flags', () => {
  test.each([
    [{ beginning: true }, null],
    [{ to: 'abc' }, 'abc'],
  ])('%j -> %j', (flags, expected) => {
    expect(resetTarget(flags)).toBe(expected);
  });

  test.each([
    [{}, /give --beginning or --to/],
    [{ beginning: true, to: 'abc' }, /not both/],
    [{ to: true as const }, /non-empty iterator/],
    [{ to: '' }, /non-empty iterator/],
    [{ to: '   ' }, /non-empty iterator/],
    [{ to: ' abc' }, /whitespace/],
  ])('%j is refused as a usage error', (flags, message) => {
    expect(() => resetTarget(flags)).toThrow(expect.objectContaining({ name: 'CliUsageError', message: expect.stringMatching(message) }));
  });
});
