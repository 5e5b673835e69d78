import { ConfigError, type Config } from '../config/config.js';
import type { FeedOriginConflict } from '../db/feed-registry.js';

/** What `run` talks to: the configured operator(s), or the built-in simulator (the demo). */
export type RunMode = 'operator' | 'demo';

// set without a base URL, each says this is a deployment, not someone trying the demo
const POINTERS_ELSEWHERE = ['DATABASE_URL', 'LEASE_DATABASE_URL', 'INTAKE_API_KEY', 'INTAKE_API_SECRET'] as const;

const STRICT = 'INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG=1';

/**
 * Decides, before anything is opened or written, whether `run` may start the built-in simulator.
 * Pure. It starts only when nothing points elsewhere (no DATABASE_URL, LEASE_DATABASE_URL, FEEDS_FILE,
 * INTAKE_API_KEY or INTAKE_API_SECRET) or on `run --demo`; anything else without a base URL is a
 * deployment missing INTAKE_API_BASE_URL (a Secret without that key, a blank line in an env file), so
 * it is refused (ConfigError, exit 2) naming the variable. No variable can allow the simulator:
 * INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG=1 (the image, the systemd unit) only adds refusals (the demo
 * even with --demo, and embedded PGlite).
 */
export function decideRunMode(config: Config, options: { demo: boolean }): RunMode {
  const strict = config.INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG === '1';
  const configuredUpstream = config.FEEDS_FILE ? 'FEEDS_FILE' : config.INTAKE_API_BASE_URL ? 'INTAKE_API_BASE_URL' : undefined;
  if (configuredUpstream) {
    if (options.demo) throw refusal(`--demo: the built-in simulator cannot run with ${configuredUpstream} set`);
    if (strict && !config.DATABASE_URL) throw refusal(`DATABASE_URL: is required here (${STRICT} refuses embedded PGlite)`);
    return 'operator';
  }
  if (strict) {
    throw refusal(
      ...[
        `INTAKE_API_BASE_URL: is required here (${STRICT} refuses the built-in simulator)`,
        ...(config.DATABASE_URL ? [] : [`DATABASE_URL: is required here (${STRICT} refuses embedded PGlite)`]),
      ],
    );
  }
  if (options.demo) return 'demo';
  const set = POINTERS_ELSEWHERE.filter((key) => config[key] !== undefined);
  if (set.length > 0) {
    throw refusal(
      `INTAKE_API_BASE_URL: is required: ${set.join(', ')} ${set.length > 1 ? 'are' : 'is'} set, so this is a deployment, not the demo; ` +
        'nothing was started or written (the built-in simulator starts only when nothing points elsewhere, or with `run --demo`)',
    );
  }
  return 'demo';
}

/** The refusal when a claim of the feeds met a feed of the other kind (see registerFeeds). */
export function feedOriginRefusal(conflict: FeedOriginConflict, mode: RunMode): ConfigError {
  if (mode === 'demo') {
    return refusal(
      `INTAKE_API_BASE_URL: is not set, and this database holds feed ${conflict.feed}, an operator's feed: the built-in simulator ` +
        'never resets its checkpoint, seeds rows or delivers its outbox. Set INTAKE_API_BASE_URL (with the key and secret) for a ' +
        'real run, or give the demo an empty DATA_DIR or database',
    );
  }
  return refusal(
    `this database holds feed ${conflict.feed} of the built-in simulator (the demo): a real run never reads a simulated ` +
      'checkpoint or its rows. Give the deployment a database (or DATABASE_SCHEMA) of its own, or start from an empty DATA_DIR',
  );
}

function refusal(...lines: string[]): ConfigError {
  return new ConfigError(lines);
}
