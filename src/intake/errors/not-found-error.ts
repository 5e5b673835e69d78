import { describeRequest, type RequestContext } from './request-context.js';

/** 404: the event, subscription or prescription does not exist for these credentials. */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
  readonly status = 404;

  constructor(
    readonly context: RequestContext,
    readonly serverMessage: string | undefined,
    options?: ErrorOptions,
  ) {
    super(`${describeRequest(context)}: 404 Not Found`, options);
  }
}
