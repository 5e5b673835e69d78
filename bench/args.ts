import { z } from 'zod';
import { number, parseFlagArgs, wholeNumber } from './flag-args.js';
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
  return parseFlagArgs(argv, argsSchema, FLAGS, USAGE, ['keep']);
}
