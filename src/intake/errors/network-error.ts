import { describeRequest, type RequestContext } from './request-context.js';

/**
 * The connection failed (refused, reset, closed mid-response, DNS). Retryable.
 * `code` is the system or undici code found in the cause chain, e.g. ECONNREFUSED.
 */
export class NetworkError extends Error {
  override readonly name = 'NetworkError';

  constructor(
    readonly context: RequestContext,
    readonly code: string | undefined,
    options?: ErrorOptions,
  ) {
    super(`${describeRequest(context)}: network error${code ? ` ${code}` : ''}`, options);
  }
}
