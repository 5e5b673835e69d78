import { sanitizeOperatorText } from '../operator-text.js';
import { describeRequest, type RequestContext } from './request-context.js';

/**
 * 400: the operator could not read the request. `serverMessage` keeps the body's
 * `error` string apart from `message`, which may be logged: a server may echo input.
 */
export class BadRequestError extends Error {
  override readonly name = 'BadRequestError';
  /** the body's `error`, sanitised (sanitizeOperatorText): validation words only, never a value */
  readonly serverMessage: string | undefined;
  readonly status = 400;

  constructor(
    readonly context: RequestContext,
    serverMessage: string | undefined,
    options?: ErrorOptions,
  ) {
    const snippet = serverMessage === undefined ? '' : sanitizeOperatorText(serverMessage);
    super(`${describeRequest(context)}: 400 Bad Request${snippet ? ` (the operator says: ${snippet})` : ''}`, options);
    // the operator's words may quote what it refused (PHI): only the sanitised form is kept
    this.serverMessage = serverMessage === undefined ? undefined : sanitizeOperatorText(serverMessage);
  }
}
