import { z } from 'zod';
import { parseFlagArgs, wholeNumber } from './flag-args.js';

const argsSchema = z.object({
  /** the checkout the drain is compared against (a worktree of main before a change) */
  baseline: z.string({ error: 'is required: the checkout to compare against' }).min(1, { message: 'must not be empty' }),
  /** the checkout measured against it (default: this one) */
  candidate: z.string().min(1).optional(),
  events: wholeNumber(1_000, 10_000_000).default(100_000),
  /** baseline-then-candidate drains, alternated */
  pairs: wholeNumber(1, 20).default(3),
  resultsDir: z.string().min(1).default('bench/results'),
});

export type DrainCompareArgs = z.output<typeof argsSchema>;

const FLAGS = {
  baseline: '--baseline',
  candidate: '--candidate',
  events: '--events',
  pairs: '--pairs',
  resultsDir: '--results-dir',
} as const satisfies Record<keyof DrainCompareArgs, string>;

export const DRAIN_COMPARE_USAGE =
  'usage: node --import tsx bench/drain-compare.ts --baseline DIR [--candidate DIR] [--events N] [--pairs N] [--results-dir DIR]';

/** Parses the drain comparison's command line; throws BenchUsageError naming the bad flag. */
export function parseDrainCompareArgs(argv: readonly string[]): DrainCompareArgs {
  return parseFlagArgs(argv, argsSchema, FLAGS, DRAIN_COMPARE_USAGE);
}
