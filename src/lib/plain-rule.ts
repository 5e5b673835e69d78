import type { z } from 'zod';

/**
 * The rule an input broke, worded as what it must be, for the checks that give no message of their
 * own (zod's default words them as types: "Invalid input: expected string, received undefined").
 * Pass as `safeParse(value, { error: plainRule })`; undefined keeps zod's message. Never quotes the value. Pure.
 */
export function plainRule(issue: z.core.$ZodRawIssue): string | undefined {
  const bound = issue as { maximum?: unknown; minimum?: unknown; inclusive?: boolean; origin?: string };
  switch (issue.code) {
    case 'too_big':
      return bound.origin === 'string' ? `must be at most ${String(bound.maximum)} characters` : `must be at most ${String(bound.maximum)}`;
    case 'too_small':
      if (bound.origin === 'string') return `must be at least ${String(bound.minimum)} characters`;
      if (bound.origin === 'array') return `must hold at least ${String(bound.minimum)}`;
      return `must be ${bound.inclusive ? 'at least' : 'greater than'} ${String(bound.minimum)}`;
    case 'invalid_type': {
      const expected = String((issue as { expected?: unknown }).expected);
      const kind = `${/^[aeiou]/.test(expected) ? 'an' : 'a'} ${expected}`;
      // zod 4 leaves `input` on the raw issue: undefined means the field is missing
      return (issue as { input?: unknown }).input === undefined ? `is required (${kind})` : `must be ${kind}`;
    }
    default:
      return undefined;
  }
}
