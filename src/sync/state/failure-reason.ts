import type { UpstreamFailureReason } from './worker-snapshot.js';

/**
 * The metric label for a failed request to the operator. Decided from the error's class name and
 * HTTP status only (never its message), so a label is always one of a fixed few values.
 */
export function upstreamFailureReason(error: unknown): UpstreamFailureReason {
  if (!(error instanceof Error)) return 'other';
  switch (error.name) {
    case 'UnauthorizedError':
      return 'unauthorized';
    case 'UpstreamError':
      // UpstreamError is 5xx or 429 (see src/intake/errors/upstream-error.ts)
      return (error as { status?: unknown }).status === 429 ? 'rate_limited' : 'server_error';
    case 'RequestTimeoutError':
      return 'timeout';
    case 'NetworkError':
      return 'network';
    case 'BadRequestError':
      return 'bad_request';
    case 'ResponseSchemaError':
    case 'UnexpectedStatusError':
    case 'EventsNotFoundError':
      // the operator answered something the contract does not allow
      return 'bad_response';
    default:
      return 'other';
  }
}
