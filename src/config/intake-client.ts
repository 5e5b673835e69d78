import { IntakeClient, type IntakeClientOptions } from '../intake/client.js';
import type { Config } from './config.js';

/** The account a client speaks for: the operator's base URL and the credentials it issued. */
export interface OperatorAccount {
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
}

/** What a caller may set beside the configuration: its logger, metrics hook, a shorter timeout, fewer retries, the daemon's host budget. */
export type ClientExtras = Pick<IntakeClientOptions, 'logger' | 'onRetry' | 'retry' | 'signal' | 'requestBudget'> & {
  /** a cap below HTTP_TIMEOUT_MS (status's lag probe); never above it */
  timeoutCapMs?: number;
};

/**
 * The one constructor of an IntakeClient from configuration, for the daemon and every command: each
 * client carries HTTP_TIMEOUT_MS and the MAX_RESPONSE_BYTES cap that keeps an operator's oversized
 * answer out of memory (four commands once built their own and left the cap out). TLS trust is the
 * process's (NODE_EXTRA_CA_CERTS; NODE_TLS_REJECT_UNAUTHORIZED=0 is refused by the config schema).
 */
export function intakeClientFor(
  config: Pick<Config, 'HTTP_TIMEOUT_MS' | 'MAX_RESPONSE_BYTES'>,
  account: OperatorAccount,
  extras: ClientExtras = {},
): IntakeClient {
  const { timeoutCapMs, ...rest } = extras;
  return new IntakeClient({
    ...account,
    timeoutMs: timeoutCapMs === undefined ? config.HTTP_TIMEOUT_MS : Math.min(config.HTTP_TIMEOUT_MS, timeoutCapMs),
    maxResponseBytes: config.MAX_RESPONSE_BYTES,
    ...rest,
  });
}
