import { describeRequest, type RequestContext } from './request-context.js';

/**
 * 5xx or 429: the operator is failing or asks us to slow down. Retryable;
 * `retryAfterMs` is the parsed Retry-After header when the response had one.
 */
export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';

  constructor(
    readonly context: RequestContext,
    readonly status: number,
    readonly retryAfterMs: number | undefined,
    options?: ErrorOptions,
  ) {
    const wait = retryAfterMs === undefined ? '' : ` (Retry-After ${retryAfterMs} ms)`;
    super(`${describeRequest(context)}: ${status} from the operator${wait}`, options);
  }
}
