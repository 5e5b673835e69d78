import { describeRequest, type RequestContext } from './request-context.js';

/** A status the 2024-12-10 contract does not list for this call (403, 409, a redirect...). Not retried. */
export class UnexpectedStatusError extends Error {
  override readonly name = 'UnexpectedStatusError';

  constructor(
    readonly context: RequestContext,
    readonly status: number,
    options?: ErrorOptions,
  ) {
    super(`${describeRequest(context)}: unexpected status ${status}`, options);
  }
}
