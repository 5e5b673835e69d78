import { z } from 'zod';
import { BenchUsageError } from './bench-usage-error.js';
import { parseFlagArgs, wholeNumber } from './flag-args.js';

// the defaults are the sizes; the windows are short enough for a run of minutes on 2 cores
const argsSchema = z.object({
  feeds: wholeNumber(1, 2_000).default(500),
  replicas: z
    .string()
    .regex(/^[1-8](,[1-8])*$/, { message: 'must be a comma-separated list of replica counts from 1 to 8, e.g. 1,2,4' })
    .transform((text) => text.split(',').map(Number))
    .default([1, 2, 4]),
  warmupSeconds: wholeNumber(0, 600).default(10),
  idleSeconds: wholeNumber(5, 600).default(30),
  backlogged: wholeNumber(0, 2_000).default(50),
  backlogPrescriptions: wholeNumber(1, 100_000).default(100),
  /** the replicas' OPERATOR_MAX_RPS; unset: the daemon's default */
  operatorMaxRps: wholeNumber(0, 100_000).optional(),
  /** the replicas' POLL_INTERVAL_MS; unset: the daemon's default */
  pollIntervalMs: wholeNumber(1_000, 600_000).optional(),
  /** the replicas' LEASE_RETRY_MS and LEASE_TTL_MS (the daemon's defaults: 2000 and 15000) */
  leaseRetryMs: wholeNumber(100, 600_000).default(2_000),
  leaseTtlMs: wholeNumber(1_000, 3_600_000).default(15_000),
  resultsDir: z.string().min(1).default('bench/results'),
  /** only the cold start, the warmup and the backlog: no idle window, join or kill -9 (a drain measured alone, and sooner) */
  backlogOnly: z.boolean().default(false),
});

export type FleetArgs = z.output<typeof argsSchema>;

const FLAGS = {
  feeds: '--feeds',
  replicas: '--replicas',
  warmupSeconds: '--warmup-seconds',
  idleSeconds: '--idle-seconds',
  backlogged: '--backlogged',
  backlogPrescriptions: '--backlog-prescriptions',
  operatorMaxRps: '--operator-max-rps',
  pollIntervalMs: '--poll-interval-ms',
  leaseRetryMs: '--lease-retry-ms',
  leaseTtlMs: '--lease-ttl-ms',
  resultsDir: '--results-dir',
  backlogOnly: '--backlog-only',
} as const satisfies Record<keyof FleetArgs, string>;

export const FLEET_USAGE = `usage: npm run bench:fleet -- [--feeds N] [--replicas 1,2,4] [--warmup-seconds S] [--idle-seconds S]
       [--backlogged N] [--backlog-prescriptions N] [--operator-max-rps N] [--poll-interval-ms MS]
       [--lease-retry-ms MS] [--lease-ttl-ms MS] [--results-dir DIR] [--backlog-only]`;

/** Parses `npm run bench:fleet`'s arguments; throws BenchUsageError naming each bad flag. */
export function parseFleetArgs(argv: readonly string[]): FleetArgs {
  const args = parseFlagArgs(argv, argsSchema, FLAGS, FLEET_USAGE, ['backlogOnly']);
  if (args.backlogOnly && args.backlogged === 0)
    throw new BenchUsageError(`invalid arguments:\n  --backlog-only: needs --backlogged above 0\n${FLEET_USAGE}`);
  if (args.backlogged > args.feeds) throw new BenchUsageError(`invalid arguments:\n  --backlogged: must be <= --feeds\n${FLEET_USAGE}`);
  // the daemon refuses the same (src/config/config.ts): say so before any replica starts
  if (args.leaseTtlMs < 2 * args.leaseRetryMs)
    throw new BenchUsageError(`invalid arguments:\n  --lease-ttl-ms: must be at least twice --lease-retry-ms\n${FLEET_USAGE}`);
  return args;
}
