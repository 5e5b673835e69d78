import { describeRequest, type RequestContext } from './request-context.js';

/** One reason a body was refused: where (dotted path, `(body)` for the whole) and which rule. */
export interface SchemaIssue {
  readonly path: string;
  readonly message: string;
}

/**
 * A 2xx body that is not JSON or fails its schema. Not a transport error: the
 * exchange worked but the payload breaks the contract (or was torn in transit).
 * Only paths and rules are kept, never the offending values.
 */
export class ResponseSchemaError extends Error {
  override readonly name = 'ResponseSchemaError';

  constructor(
    readonly context: RequestContext,
    readonly status: number,
    readonly issues: readonly SchemaIssue[],
    options?: ErrorOptions,
  ) {
    const paths = [...new Set(issues.map((issue) => issue.path))].join(', ');
    super(`${describeRequest(context)}: ${status} response does not match the contract at ${paths}`, options);
  }
}
