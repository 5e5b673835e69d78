import { parseArgs } from 'node:util';
import { z } from 'zod';
import { BenchUsageError } from './bench-usage-error.js';

// the type message only: a schema-wide `message` would also replace the range messages
const number = () => z.coerce.number({ error: (issue) => (issue.code === 'invalid_type' ? 'must be a number' : undefined) });
const wholeNumber = (min: number, max: number) =>
  number().int({ message: 'must be a whole number' }).min(min, { message: `must be >= ${min}` }).max(max, { message: `must be <= ${max}` });
const seconds = () => number().positive({ message: 'must be > 0' }).max(600, { message: 'must be <= 600' });

const argsSchema = z.object({
  events: wholeNumber(1, 10_000_000).default(1_000_000),
  ceilingSeconds: seconds().default(10),
  naiveSeconds: seconds().default(10),
  latencyRounds: wholeNumber(1, 1_000).default(30),
  pollIntervalMs: wholeNumber(10, 60_000).default(1_000),
  /** the large local prescription table of the match-scaling phase (the 1M of match_ms_per_page_1m) */
  matchLarge: wholeNumber(20_000, 10_000_000).default(1_000_000),
  resultsDir: z.string().min(1).default('bench/results'),
  keep: z.boolean().default(false),
});

export type BenchArgs = z.output<typeof argsSchema>;

const FLAGS = {
  events: '--events',
  ceilingSeconds: '--ceiling-seconds',
  naiveSeconds: '--naive-seconds',
  latencyRounds: '--latency-rounds',
  pollIntervalMs: '--poll-interval-ms',
  matchLarge: '--match-large',
  resultsDir: '--results-dir',
  keep: '--keep',
} as const satisfies Record<keyof BenchArgs, string>;

export const USAGE = `usage: npm run bench -- [--events N] [--ceiling-seconds S] [--naive-seconds S]
       [--latency-rounds N] [--poll-interval-ms MS] [--match-large N] [--results-dir DIR] [--keep]`;

/** Parses the bench command line; throws BenchUsageError naming the bad flag. */
export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      options: {
        events: { type: 'string' },
        'ceiling-seconds': { type: 'string' },
        'naive-seconds': { type: 'string' },
        'latency-rounds': { type: 'string' },
        'poll-interval-ms': { type: 'string' },
        'match-large': { type: 'string' },
        'results-dir': { type: 'string' },
        keep: { type: 'boolean' },
      },
    }));
  } catch (error) {
    throw new BenchUsageError(`${(error as Error).message}\n${USAGE}`, { cause: error });
  }
  const result = argsSchema.safeParse({
    events: values.events,
    ceilingSeconds: values['ceiling-seconds'],
    naiveSeconds: values['naive-seconds'],
    latencyRounds: values['latency-rounds'],
    pollIntervalMs: values['poll-interval-ms'],
    matchLarge: values['match-large'],
    resultsDir: values['results-dir'],
    keep: values.keep,
  });
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const flag = FLAGS[issue.path[0] as keyof BenchArgs] ?? String(issue.path[0]);
    return `  ${flag}: ${issue.message}`;
  });
  throw new BenchUsageError(`invalid arguments:\n${lines.join('\n')}\n${USAGE}`);
}
