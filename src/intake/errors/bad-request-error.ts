import { describeRequest, type RequestContext } from './request-context.js';

/**
 * 400: the operator could not read the request. `serverMessage` keeps the body's
 * `error` string apart from `message`, which may be logged: a server may echo input.
 */
export class BadRequestError extends Error {
  override readonly name = 'BadRequestError';
  readonly status = 400;

  constructor(
    readonly context: RequestContext,
    readonly serverMessage: string | undefined,
    options?: ErrorOptions,
  ) {
    super(`${describeRequest(context)}: 400 Bad Request`, options);
  }
}
