import { describeDatabaseError } from '../db/errors/describe-database-error.js';

/** Thrown for bad CLI input (missing file, malformed JSON, bad flag): printed without a stack. */
export class CliUsageError extends Error {
  override readonly name = 'CliUsageError';
}

/**
 * Prints an error for a human (one clear line, no stack, no PHI: messages name
 * fields and identifiers only) and returns the exit code.
 */
export function reportCliError(error: unknown): number {
  const err = error instanceof Error ? error : new Error(String(error));
  // a driver's "Failed query: <statement>" names the statement, not the cause: say what the server said
  const message = err.message.startsWith('Failed query') ? describeDatabaseError(err) : err.message;
  process.stderr.write(`intake-sync: ${message}\n`);
  if (process.env.INTAKE_SYNC_DEBUG && err.stack) process.stderr.write(`${err.stack}\n`);
  return [
    'CliUsageError',
    'ConfigError',
    'SourceMismatchError',
    'MigrationArgumentError',
    'InsecureBaseUrlError',
    'EventsNotFoundError',
    'StoreNotReadyError',
    'DataDirLockedError',
  ].includes(err.name)
    ? 2
    : 1;
}
