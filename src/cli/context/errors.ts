import { describeDatabaseError } from '../../db/errors/describe-database-error.js';
import { terminalSafe } from './terminal-text.js';
import { DaemonError } from '../../daemon/errors.js';
import { scrubString } from '../../log/redaction.js';

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
  // a server's message may quote stored text (an external_id): printed with its controls escaped
  process.stderr.write(`intake-sync: ${terminalSafe(message)}\n`);
  if (process.env.INTAKE_SYNC_DEBUG) process.stderr.write(debugTrace(err));
  // the daemon's errors say their own exit code
  if (err instanceof DaemonError) return err.exitCode;
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

/**
 * The stack for INTAKE_SYNC_DEBUG: each error of the cause chain by name, code and its frames only.
 * A stack's first lines repeat the message, and a failed query's message carries its parameters
 * (PHI): they are never printed, nor are the driver's `parameters`.
 */
export function debugTrace(error: unknown): string {
  const lines: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth += 1) {
    const code = (current as { code?: unknown }).code;
    lines.push(`${depth === 0 ? '' : 'caused by: '}${current.name}${typeof code === 'string' ? ` (${code})` : ''}`);
    lines.push(
      ...(current.stack ?? '')
        .split('\n')
        .filter((line) => /^\s+at /.test(line))
        .map(scrubString),
    );
    current = current.cause;
  }
  return `${lines.join('\n')}\n`;
}
