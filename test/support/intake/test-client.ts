import { IntakeClient, type IntakeClientOptions, type RetryInfo } from '../../../src/intake/client.js';

/** A client plus what its retry layer did: every retry reported and every wait asked for. */
export interface ObservedClient {
  readonly client: IntakeClient;
  readonly retries: RetryInfo[];
  /** delays the client asked to sleep, in order; the recording sleep returns at once */
  readonly sleeps: number[];
}

/**
 * A client for socket tests: short timeouts, and a sleep that records the
 * requested delay and returns at once, so backoff is observed without waiting.
 */
export function observedClient(
  baseUrl: string,
  credential: { key: string; secret: string },
  overrides: Partial<IntakeClientOptions> = {},
): ObservedClient {
  const retries: RetryInfo[] = [];
  const sleeps: number[] = [];
  const client = new IntakeClient({
    baseUrl,
    apiKey: credential.key,
    apiSecret: credential.secret,
    timeoutMs: 2_000,
    retry: { retries: 4, baseMs: 20, capMs: 200, maxElapsedMs: 20_000 },
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...overrides,
    onRetry: (info) => {
      retries.push(info);
      overrides.onRetry?.(info);
    },
  });
  return { client, retries, sleeps };
}
