import { describeRequest, type RequestContext } from './request-context.js';

/** A status the 2024-12-10 contract does not list for this call (403, 409, a redirect...). Not retried. */
export class UnexpectedStatusError extends Error {
  override readonly name = 'UnexpectedStatusError';

  constructor(
    readonly context: RequestContext,
    readonly status: number,
    options?: ErrorOptions,
  ) {
    // a redirect is never followed (http-transport.ts): say so, without echoing where it pointed
    const redirect = status >= 300 && status < 400 ? ' (a redirect: not followed; the base URL must be the final address)' : '';
    super(`${describeRequest(context)}: unexpected status ${status}${redirect}`, options);
  }
}
