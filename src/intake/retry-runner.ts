import pRetry from 'p-retry';
import type { Logger } from 'pino';
import type { Sleep } from '../lib/abortable-sleep.js';
import { describeRequest, type RequestContext } from './errors/request-context.js';
import { decideRetry, type RetryMode, type RetryPolicy } from './retry-policy.js';

/** What a retry hook receives: enough to count and label, no bodies. */
export interface RetryInfo {
  readonly method: string;
  readonly path: string;
  /** the attempt that just failed, 1-based */
  readonly attempt: number;
  readonly delayMs: number;
  readonly error: Error;
}

export interface RetryRunnerDeps {
  readonly policy: RetryPolicy;
  readonly random: () => number;
  readonly sleep: Sleep;
  /** monotonic milliseconds, for the elapsed-time budget */
  readonly monotonicNow: () => number;
  readonly logger?: Logger;
  readonly onRetry?: (info: RetryInfo) => void;
}

/**
 * The client's one retry layer: p-retry drives the attempts and enforces the
 * retry count and total time; the delay comes from decideRetry, slept in
 * `shouldRetry` (p-retry's own backoff is zeroed) so the wait honours
 * Retry-After and aborts with the caller's signal.
 */
export class RetryRunner {
  constructor(private readonly deps: RetryRunnerDeps) {}

  /** Runs `attempt` until it succeeds, fails for good, or the budget is spent. */
  run<T>(mode: RetryMode, context: RequestContext, attempt: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const { policy, random, sleep, monotonicNow } = this.deps;
    const startedAt = monotonicNow();
    return pRetry(attempt, {
      retries: policy.retries,
      maxRetryTime: policy.maxElapsedMs,
      minTimeout: 0,
      maxTimeout: 0,
      signal,
      shouldRetry: async ({ error, attemptNumber, retriesConsumed }) => {
        const decision = decideRetry({
          mode,
          error,
          retryIndex: retriesConsumed,
          elapsedMs: monotonicNow() - startedAt,
          policy,
          random,
        });
        if (!decision.retry) return false;
        this.#report(context, { attempt: attemptNumber, delayMs: decision.delayMs, error });
        await sleep(decision.delayMs, signal);
        return true;
      },
    });
  }

  #report(context: RequestContext, retry: { attempt: number; delayMs: number; error: Error }): void {
    const status = (retry.error as { status?: unknown }).status;
    this.deps.logger?.warn(
      {
        method: context.method,
        path: context.path,
        status: typeof status === 'number' ? status : undefined,
        errorName: retry.error.name,
        attempt: retry.attempt,
        delayMs: retry.delayMs,
      },
      `retrying ${describeRequest(context)}`,
    );
    this.deps.onRetry?.({ method: context.method, path: context.path, ...retry });
  }
}
