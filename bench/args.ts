import { parseArgs } from 'node:util';
import { z } from 'zod';
import { BenchUsageError } from './bench-usage-error.js';

// the type message only: a schema-wide `message` would also replace the range messages
const number = () => z.coerce.number({ error: (issue) => (issue.code === 'invalid_type' ? 'must be a number' : undefined) });
const wholeNumber = (min: number, max: number) =>
  number()
    .int({ message: 'must be a whole number' })
    .min(min, { message: `must be >= ${min}` })
    .max(max, { message: `must be <= ${max}` });
const seconds = () => number().positive({ message: 'must be > 0' }).max(600, { message: 'must be <= 600' });

// a comma-separated list of round trips in ms, e.g. "50,150"
const roundTrips = () =>
  z
    .string()
    .regex(/^\d{1,4}(,\d{1,4})*$/, { message: 'must be a comma-separated list of whole ms, e.g. 50,150' })
    .transform((text) => text.split(',').map(Number));

const argsSchema = z.object({
  events: wholeNumber(1, 10_000_000).default(1_000_000),
  /** backlog drains per run, each into a fresh copy of the same registered database */
  drains: wholeNumber(1, 10).default(3),
  ceilingSeconds: seconds().default(10),
  naiveSeconds: seconds().default(10),
  latencyRounds: wholeNumber(1, 1_000).default(30),
  pollIntervalMs: wholeNumber(10, 60_000).default(1_000),
  /** the large local prescription table of the match-scaling phase (the 1M of match_ms_per_page_1m) */
  matchLarge: wholeNumber(20_000, 10_000_000).default(1_000_000),
  /** round trips added to every operator request in the WAN drains */
  wanRttMs: roundTrips().default([50, 150]),
  /** each WAN drain is sized to last about this long at its fetch-bound limit */
  wanSeconds: seconds().default(15),
  /** polls of the caught-up daemon the idle window lasts */
  idlePolls: wholeNumber(1, 10_000).default(120),
  idlePollIntervalMs: wholeNumber(10, 60_000).default(1_000),
  /** accounts of the many-feeds drain: the drain's backlog split over them, drained by one process */
  feeds: wholeNumber(2, 100).default(20),
  resultsDir: z.string().min(1).default('bench/results'),
  keep: z.boolean().default(false),
});

export type BenchArgs = z.output<typeof argsSchema>;

const FLAGS = {
  events: '--events',
  drains: '--drains',
  ceilingSeconds: '--ceiling-seconds',
  naiveSeconds: '--naive-seconds',
  latencyRounds: '--latency-rounds',
  pollIntervalMs: '--poll-interval-ms',
  matchLarge: '--match-large',
  wanRttMs: '--wan-rtt-ms',
  wanSeconds: '--wan-seconds',
  idlePolls: '--idle-polls',
  idlePollIntervalMs: '--idle-poll-interval-ms',
  feeds: '--feeds',
  resultsDir: '--results-dir',
  keep: '--keep',
} as const satisfies Record<keyof BenchArgs, string>;

export const USAGE = `usage: npm run bench -- [--events N] [--drains N] [--ceiling-seconds S] [--naive-seconds S]
       [--latency-rounds N] [--poll-interval-ms MS] [--match-large N] [--wan-rtt-ms MS,MS] [--wan-seconds S]
       [--idle-polls N] [--idle-poll-interval-ms MS] [--feeds N] [--results-dir DIR] [--keep]`;

/** Parses the bench command line; throws BenchUsageError naming the bad flag. */
export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      options: {
        events: { type: 'string' },
        drains: { type: 'string' },
        'ceiling-seconds': { type: 'string' },
        'naive-seconds': { type: 'string' },
        'latency-rounds': { type: 'string' },
        'poll-interval-ms': { type: 'string' },
        'match-large': { type: 'string' },
        'wan-rtt-ms': { type: 'string' },
        'wan-seconds': { type: 'string' },
        'idle-polls': { type: 'string' },
        'idle-poll-interval-ms': { type: 'string' },
        feeds: { type: 'string' },
        'results-dir': { type: 'string' },
        keep: { type: 'boolean' },
      },
    }));
  } catch (error) {
    throw new BenchUsageError(`${(error as Error).message}\n${USAGE}`, { cause: error });
  }
  const result = argsSchema.safeParse({
    events: values.events,
    drains: values.drains,
    ceilingSeconds: values['ceiling-seconds'],
    naiveSeconds: values['naive-seconds'],
    latencyRounds: values['latency-rounds'],
    pollIntervalMs: values['poll-interval-ms'],
    matchLarge: values['match-large'],
    wanRttMs: values['wan-rtt-ms'],
    wanSeconds: values['wan-seconds'],
    idlePolls: values['idle-polls'],
    idlePollIntervalMs: values['idle-poll-interval-ms'],
    feeds: values.feeds,
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
