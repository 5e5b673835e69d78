import { NetworkError } from './network-error.js';
import { RequestTimeoutError } from './request-timeout-error.js';
import { UpstreamError } from './upstream-error.js';

/**
 * True for failures that may go away on their own: 5xx/429, a broken
 * connection, a timeout. False for everything the caller must fix (400, 401,
 * 404, 422, a request refused locally) and for a body that breaks the contract:
 * the client already re-reads torn bodies, so one that reaches a caller is a
 * contract change, not a blip.
 */
export function isRetryable(error: unknown): boolean {
  return error instanceof UpstreamError || error instanceof NetworkError || error instanceof RequestTimeoutError;
}
