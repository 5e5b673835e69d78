import type { Config } from '../../../config/config.js';

// set without a base URL, each says this is a deployment, not the demo (as decideRunMode reads them)
const DEPLOYMENT_SIGNS = ['DATABASE_URL', 'LEASE_DATABASE_URL', 'FEEDS_FILE', 'INTAKE_API_KEY', 'INTAKE_API_SECRET'] as const;

/**
 * Why `status` cannot tell a feed's lag when it has no operator to ask, from the configuration it
 * actually sees: the demo (nothing configured, the simulator lives inside `run`), a deployment
 * missing INTAKE_API_BASE_URL (`run` refuses it too), or a FEEDS_FILE feed without one. Pure.
 */
export function noOperatorLagDetail(config: Config, feed: string): string {
  if (config.FEEDS_FILE) return `unknown: feed ${feed} has no base_url, api_key and api_secret in FEEDS_FILE to ask`;
  const set = DEPLOYMENT_SIGNS.filter((key) => config[key] !== undefined);
  if (set.length === 0) return 'unknown: nothing is configured, so this is the demo, whose simulator runs only inside `run`';
  const missing = (['INTAKE_API_BASE_URL', 'INTAKE_API_KEY', 'INTAKE_API_SECRET'] as const).filter((key) => !config[key]);
  return `unknown: ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not set (${set.join(', ')} ${set.length > 1 ? 'are' : 'is'} set, so \`run\` needs ${missing.length > 1 ? 'them' : 'it'} too)`;
}
