import { ConfigError, loadConfig, type Config } from '../../config/config.js';
import type { IntakeClient } from '../../intake/client.js';
import { createLogger, type Logger } from '../../log/log.js';
import { intakeClientFor } from '../../config/intake-client.js';

/** What a remote command needs from the environment, all present. */
export interface RemoteConfig {
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  timeoutMs: number;
  maxResponseBytes: number;
}

/**
 * The remote settings, or a ConfigError naming each missing variable. The
 * worker falls back to the built-in sandbox without a base URL; a one-off
 * command against "whatever is configured" must not.
 */
export function requireRemoteConfig(config: Config): RemoteConfig {
  const { INTAKE_API_BASE_URL: baseUrl, INTAKE_API_KEY: apiKey, INTAKE_API_SECRET: apiSecret } = config;
  if (baseUrl && apiKey && apiSecret)
    return { baseUrl, apiKey, apiSecret, timeoutMs: config.HTTP_TIMEOUT_MS, maxResponseBytes: config.MAX_RESPONSE_BYTES };
  const missing = (['INTAKE_API_BASE_URL', 'INTAKE_API_KEY', 'INTAKE_API_SECRET'] as const).filter((key) => !config[key]);
  throw new ConfigError(missing.map((key) => `${key}: is required for commands that call the intake API (set it, or use FEEDS_FILE)`));
}

/** An IntakeClient for the configured operator (retry defaults from the client). */
export function clientFromConfig(config: Config, logger?: Logger): IntakeClient {
  const remote = requireRemoteConfig(config);
  return intakeClientFor(config, remote, { logger });
}

/** The client a remote command uses: environment parsed once, logs (retries) on stderr. */
export function clientFromEnvironment(env: NodeJS.ProcessEnv = process.env): IntakeClient {
  const config = loadConfig(env);
  return clientFromConfig(config, createLogger({ level: config.LOG_LEVEL }));
}
