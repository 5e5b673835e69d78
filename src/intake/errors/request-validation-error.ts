import type { SchemaIssue } from './response-schema-error.js';

/**
 * A request refused locally before anything was sent (bad prescription, limit
 * out of range). Lists the failing paths and rules, never the values.
 */
export class RequestValidationError extends Error {
  override readonly name = 'RequestValidationError';

  constructor(
    readonly operation: string,
    readonly issues: readonly SchemaIssue[],
    options?: ErrorOptions,
  ) {
    super(`${operation}: invalid request, nothing sent: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`, options);
  }
}
