import { parseArgs } from 'node:util';
import { z } from 'zod';
import { BenchUsageError } from './bench-usage-error.js';

const wholeNumber = (min: number, max: number) =>
  z.coerce
    .number({ error: (issue) => (issue.code === 'invalid_type' ? 'must be a number' : undefined) })
    .int({ message: 'must be a whole number' })
    .min(min, { message: `must be >= ${min}` })
    .max(max, { message: `must be <= ${max}` });

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
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      options: {
        baseline: { type: 'string' },
        candidate: { type: 'string' },
        events: { type: 'string' },
        pairs: { type: 'string' },
        'results-dir': { type: 'string' },
      },
    }));
  } catch (error) {
    throw new BenchUsageError(`${(error as Error).message}\n${DRAIN_COMPARE_USAGE}`, { cause: error });
  }
  const result = argsSchema.safeParse({
    baseline: values.baseline,
    candidate: values.candidate,
    events: values.events,
    pairs: values.pairs,
    resultsDir: values['results-dir'],
  });
  if (result.success) return result.data;
  const lines = result.error.issues.map(
    (issue) => `  ${FLAGS[issue.path[0] as keyof DrainCompareArgs] ?? String(issue.path[0])}: ${issue.message}`,
  );
  throw new BenchUsageError(`invalid arguments:\n${lines.join('\n')}\n${DRAIN_COMPARE_USAGE}`);
}
