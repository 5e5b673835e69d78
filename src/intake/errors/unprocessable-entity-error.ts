import { describeRequest, type RequestContext } from './request-context.js';

/**
 * 422: field errors, `errors` keyed by field path as the operator sent it. The
 * message lists the paths only; the per-field messages stay in `errors`
 * because a server may quote the rejected value.
 */
export class UnprocessableEntityError extends Error {
  override readonly name = 'UnprocessableEntityError';
  readonly status = 422;

  constructor(
    readonly context: RequestContext,
    readonly errors: Readonly<Record<string, unknown>>,
    options?: ErrorOptions,
  ) {
    const paths = Object.keys(errors);
    const detail = paths.length > 0 ? `: invalid ${paths.join(', ')}` : '';
    super(`${describeRequest(context)}: 422 Unprocessable Entity${detail}`, options);
  }

  /** Field paths the operator refused, e.g. `prescription.patient.dob`. */
  get fieldPaths(): string[] {
    return Object.keys(this.errors);
  }
}
