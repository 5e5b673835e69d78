import type { Logger } from 'pino';
import type { Sleep } from '../lib/abortable-sleep.js';
import { coerceError } from './errors/coerce-error.js';
import { describeRequest, type RequestContext } from './errors/request-context.js';
import { decideRetry, type RetryMode, type RetryPolicy } from './retry-policy.js';
import { inRequestSpan, retryEvent } from './request-span.js';
import { recordingSpan } from '../telemetry/spans.js';

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
  /** the operator's base URL, for the request spans' server and URL attributes */
  readonly baseUrl?: URL;
}

/**
 * The client's one retry layer: attempts until one succeeds, decideRetry (retry-policy.ts) says
 * stop, or the caller's signal aborts. Every number (count, backoff, Retry-After, elapsed budget) is
 * decideRetry's; this loop only sleeps what it decides, abortably, and reports each retry.
 */
export class RetryRunner {
  constructor(private readonly deps: RetryRunnerDeps) {}

  /** Runs `attempt` until it succeeds, fails for good, or the budget is spent. */
  run<T>(mode: RetryMode, context: RequestContext, attempt: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    // one HTTP client span per logical request, its retries as events (request-span.ts)
    return inRequestSpan(this.deps.baseUrl, context.method, context.path, () => this.#attempts(mode, context, attempt, signal));
  }

  async #attempts<T>(mode: RetryMode, context: RequestContext, attempt: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const { policy, random, sleep, monotonicNow } = this.deps;
    const startedAt = monotonicNow();
    for (let retryIndex = 0; ; retryIndex++) {
      if (signal?.aborted) throw coerceError(signal.reason);
      try {
        return await attempt();
      } catch (caught) {
        const error = coerceError(caught);
        if (signal?.aborted) throw error;
        const decision = decideRetry({ mode, error, retryIndex, elapsedMs: monotonicNow() - startedAt, policy, random });
        if (!decision.retry) throw error;
        this.#report(context, { attempt: retryIndex + 1, delayMs: decision.delayMs, error });
        await sleep(decision.delayMs, signal);
      }
    }
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
    const span = recordingSpan();
    if (span) retryEvent(span, retry);
  }
}
