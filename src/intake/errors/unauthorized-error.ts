import { describeRequest, type RequestContext } from './request-context.js';

/** 401: missing or invalid credentials. Fatal: retrying cannot fix a bad key or secret. */
export class UnauthorizedError extends Error {
  override readonly name = 'UnauthorizedError';
  readonly status = 401;

  constructor(
    readonly context: RequestContext,
    readonly serverMessage: string | undefined,
    options?: ErrorOptions,
  ) {
    super(`${describeRequest(context)}: 401 Unauthorized (check INTAKE_API_KEY and INTAKE_API_SECRET)`, options);
  }
}
