import { z } from 'zod';
import type { Random } from './prng.js';

const rate = z.number().min(0).max(1);
const nonNegative = z.number().int().min(0);

/**
 * Everything the sandbox can do wrong, off by default. Transport faults are rolled
 * per /intake_api request; content faults when events are published, so the feed
 * itself (including its faults) reads the same on every replay.
 */
export const faultConfigSchema = z.strictObject({
  errorRate: rate,
  rateLimitRate: rate,
  retryAfterSeconds: nonNegative,
  latencyMs: nonNegative,
  latencyJitterMs: nonNegative,
  dropRate: rate,
  /** POST/DELETE /prescriptions: the operator applies the request, then the connection drops unanswered */
  dropAfterProcessingRate: rate,
  hangRate: rate,
  truncatedRate: rate,
  wrongShapeRate: rate,
  duplicateRate: rate,
  malformedRate: rate,
  unknownNameRate: rate,
  reorderWindow: z.number().int().min(0).max(10_000),
  iteratorMode: z.enum(['after', 'at']),
  seed: z.number().int(),
});
export type FaultConfig = z.infer<typeof faultConfigSchema>;

/** A partial update, validated the same way (admin endpoint, CLI). */
export const faultConfigPatchSchema = faultConfigSchema.partial();

export const DEFAULT_FAULTS: Readonly<FaultConfig> = Object.freeze({
  errorRate: 0,
  rateLimitRate: 0,
  retryAfterSeconds: 1,
  latencyMs: 0,
  latencyJitterMs: 0,
  dropRate: 0,
  dropAfterProcessingRate: 0,
  hangRate: 0,
  truncatedRate: 0,
  wrongShapeRate: 0,
  duplicateRate: 0,
  malformedRate: 0,
  unknownNameRate: 0,
  reorderWindow: 0,
  iteratorMode: 'after',
  seed: 1,
});

/** Applies a partial update to a config; throws a ZodError naming the bad field. */
export function mergeFaults(current: FaultConfig, patch: unknown): FaultConfig {
  return faultConfigSchema.parse({ ...current, ...faultConfigPatchSchema.parse(patch) });
}

export type TransportFault = 'drop' | 'hang' | 'server-error' | 'rate-limit';
export type EventListFault = 'truncated' | 'wrong-shape';

// Each fault kind gets its own roll, in a fixed order, so a rate of 1 always
// produces that fault and the sequence is reproducible for a seed.
function firstHit<K extends string>(random: Random, candidates: ReadonlyArray<readonly [K, number]>): K | null {
  for (const [kind, probability] of candidates) {
    if (probability > 0 && random() < probability) return kind;
  }
  return null;
}

/** Which transport fault (if any) hits this request. */
export function pickTransportFault(config: FaultConfig, random: Random): TransportFault | null {
  return firstHit<TransportFault>(random, [
    ['drop', config.dropRate],
    ['hang', config.hangRate],
    ['server-error', config.errorRate],
    ['rate-limit', config.rateLimitRate],
  ]);
}

/**
 * Whether the answer to a request the operator has just applied (POST or DELETE /prescriptions)
 * is lost: the connection drops after the change. Rolled only when the rate is set, so the
 * transport stream of existing seeds is unchanged.
 */
export function dropsAfterProcessing(config: FaultConfig, random: Random): boolean {
  return config.dropAfterProcessingRate > 0 && random() < config.dropAfterProcessingRate;
}

/** Which body fault (if any) hits a successful GET /events answer. */
export function pickEventListFault(config: FaultConfig, random: Random): EventListFault | null {
  return firstHit<EventListFault>(random, [
    ['truncated', config.truncatedRate],
    ['wrong-shape', config.wrongShapeRate],
  ]);
}

/** Added latency for one request: latencyMs plus a uniform jitter in [0, latencyJitterMs]. */
export function latencyFor(config: FaultConfig, random: Random): number {
  if (config.latencyMs === 0 && config.latencyJitterMs === 0) return 0;
  return config.latencyMs + (config.latencyJitterMs > 0 ? Math.round(random() * config.latencyJitterMs) : 0);
}
