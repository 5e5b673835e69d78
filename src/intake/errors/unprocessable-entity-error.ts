import { describeFieldErrors, sanitizeFieldErrors } from '../operator-text.js';
import { describeRequest, type RequestContext } from './request-context.js';

/**
 * 422: field errors keyed by field path. The operator's messages may quote the refused value, so
 * only their sanitised form is kept (sanitizeFieldErrors: known field paths, validation words, no
 * values), and the message shows those: `prescription.external_id: has already been taken`.
 */
export class UnprocessableEntityError extends Error {
  override readonly name = 'UnprocessableEntityError';
  readonly status = 422;

  constructor(
    readonly context: RequestContext,
    errors: Readonly<Record<string, unknown>>,
    options?: ErrorOptions,
  ) {
    const safe = sanitizeFieldErrors(errors);
    const detail = Object.keys(safe).length > 0 ? `: ${describeFieldErrors(safe)}` : '';
    super(`${describeRequest(context)}: 422 Unprocessable Entity${detail}`, options);
    this.errors = safe;
  }

  /** the operator's field errors, sanitised: field path -> messages */
  readonly errors: Readonly<Record<string, readonly string[]>>;

  /** Field paths the operator refused, e.g. `prescription.patient.dob`. */
  get fieldPaths(): string[] {
    return Object.keys(this.errors);
  }
}
