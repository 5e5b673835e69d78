import { describeRequest, type RequestContext } from './request-context.js';

/**
 * The connection failed (refused, reset, closed mid-response, DNS). Retryable.
 * `code` is the system or undici code found in the cause chain, e.g. ECONNREFUSED; `host` is the
 * operator host:port tried (from the configured base URL), so the message says where it went.
 */
export class NetworkError extends Error {
  override readonly name = 'NetworkError';

  constructor(
    readonly context: RequestContext,
    readonly code: string | undefined,
    options?: ErrorOptions,
    readonly host?: string,
  ) {
    super(
      `${describeRequest(context)}: network error${code ? ` ${code}` : ''}${host ? ` reaching the operator at ${host} (its base URL)` : ''}`,
      options,
    );
  }
}
