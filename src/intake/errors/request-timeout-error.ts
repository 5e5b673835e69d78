import { describeRequest, type RequestContext } from './request-context.js';

/** One attempt (headers and body) took longer than the per-request timeout. Retryable. */
export class RequestTimeoutError extends Error {
  override readonly name = 'RequestTimeoutError';

  constructor(
    readonly context: RequestContext,
    readonly timeoutMs: number,
    options?: ErrorOptions,
  ) {
    super(`${describeRequest(context)}: no complete response within ${timeoutMs} ms`, options);
  }
}
