import { sanitizeOperatorText } from '../operator-text.js';
import { describeRequest, type RequestContext } from './request-context.js';

/** 404: the event, subscription or prescription does not exist for these credentials. */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
  /** the body's `error`, sanitised (sanitizeOperatorText): validation words only, never a value */
  readonly serverMessage: string | undefined;
  readonly status = 404;

  constructor(
    readonly context: RequestContext,
    serverMessage: string | undefined,
    options?: ErrorOptions,
  ) {
    super(`${describeRequest(context)}: 404 Not Found`, options);
    // the operator's words may quote what it refused (PHI): only the sanitised form is kept
    this.serverMessage = serverMessage === undefined ? undefined : sanitizeOperatorText(serverMessage);
  }
}
