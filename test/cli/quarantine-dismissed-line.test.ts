import { describe, expect, test } from 'vitest';
import { dismissedLine } from '../../src/cli/commands/quarantine/quarantine-dismissed-line.js';

describe('dismissedLine', () => {
  test.each([
    [1, 'dismissed e1 (not_ours)'],
    [2, 'dismissed e1 and 1 other open finding of its subscription (not_ours): 2 in all'],
    [5, 'dismissed e1 and 4 other open findings of its subscription (not_ours): 5 in all'],
  ])('%i closed', (closed, line) => {
    expect(dismissedLine('e1', 'not_ours', closed)).toBe(line);
  });
});
