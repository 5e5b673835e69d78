import { sanitizeOperatorText } from '../operator-text.js';
import { describeRequest, type RequestContext } from './request-context.js';

/** 401: missing or invalid credentials. Fatal: retrying cannot fix a bad key or secret. */
export class UnauthorizedError extends Error {
  override readonly name = 'UnauthorizedError';
  /** the body's `error`, sanitised (sanitizeOperatorText): validation words only, never a value */
  readonly serverMessage: string | undefined;
  readonly status = 401;

  constructor(
    readonly context: RequestContext,
    serverMessage: string | undefined,
    options?: ErrorOptions,
  ) {
    super(`${describeRequest(context)}: 401 Unauthorized (check INTAKE_API_KEY and INTAKE_API_SECRET)`, options);
    // the operator's words may quote what it refused (PHI): only the sanitised form is kept
    this.serverMessage = serverMessage === undefined ? undefined : sanitizeOperatorText(serverMessage);
  }
}
