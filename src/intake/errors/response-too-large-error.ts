import { describeRequest, type RequestContext } from './request-context.js';

/**
 * A response body over the byte cap (MAX_RESPONSE_BYTES): refused before it is read whole (by its
 * Content-Length, or as the stream passes the cap), so memory stays bounded whatever the operator
 * sends. Not retried as is: the poller asks GET /events for fewer events instead.
 */
export class ResponseTooLargeError extends Error {
  override readonly name = 'ResponseTooLargeError';

  constructor(
    readonly context: RequestContext,
    readonly capBytes: number,
    /** the Content-Length the response declared, when that is how it was refused */
    readonly declaredBytes: number | undefined,
    readonly setting: string,
    options?: ErrorOptions,
  ) {
    const declared = declaredBytes === undefined ? '' : ` (Content-Length ${declaredBytes})`;
    super(`${describeRequest(context)}: response body larger than ${capBytes} bytes${declared}; the cap is ${setting}`, options);
  }
}
