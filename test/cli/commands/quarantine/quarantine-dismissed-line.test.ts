import { describe, expect, test } from 'vitest';
import { dismissedLine } from '../../../../src/cli/commands/quarantine/quarantine-dismissed-line.js';
import { DISMISS_SCOPES } from '../../../../src/console/pages/finding.js';

describe('dismissedLine', () => {
  test.each([
    [1, false, 'dismissed e1 (not_ours): the whole subscription, which had no other open finding'],
    [2, false, 'dismissed e1 and 1 other open finding of its subscription (not_ours): the whole subscription, 2 in all'],
    [5, false, 'dismissed e1 and 4 other open findings of its subscription (not_ours): the whole subscription, 5 in all'],
    [1, true, 'dismissed e1 (not_ours): this finding only'],
  ])('%i closed, only this event %s', (closed, only, line) => {
    expect(dismissedLine('e1', 'not_ours', closed, only)).toBe(line);
  });

  test("names each scope with the console's words for it (issue 34 §6: one word, one scope)", () => {
    expect(dismissedLine('e1', 'x', 3)).toContain(DISMISS_SCOPES.whole_subscription);
    expect(dismissedLine('e1', 'x', 1, true)).toContain(DISMISS_SCOPES.this_finding);
  });
});
