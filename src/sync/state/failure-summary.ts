/**
 * A one-line, PHI-free description of a failure for logs, /readyz and status.
 * Our own error classes (intake client, sync) build messages from identifiers
 * only, so their message is kept. Anything else — above all driver errors,
 * whose messages can quote a row's values — is reduced to its class name and
 * SQLSTATE/errno code.
 */
export function summarizeFailure(error: unknown): string {
  if (!(error instanceof Error)) return `non-error thrown (${typeof error})`;
  if (OWN_ERROR_NAMES.has(error.name)) return `${error.name}: ${error.message}`;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' || typeof code === 'number' ? `${error.name} (code ${code})` : error.name;
}

// classes whose messages are written by this codebase from identifiers only
const OWN_ERROR_NAMES = new Set([
  'UnauthorizedError',
  'UpstreamError',
  'NetworkError',
  'RequestTimeoutError',
  'ResponseSchemaError',
  'NotFoundError',
  'EventsNotFoundError',
  'BadRequestError',
  'UnexpectedStatusError',
  'CheckpointConflictError',
  'DrainIncompleteError',
  'LockWaitTimeoutError',
]);
