import { describeDatabaseError } from '../../db/errors/describe-database-error.js';
import { controlsEscaped, terminalSafe } from '../../lib/terminal-text.js';
import { DaemonError } from '../../daemon/errors.js';
import { scrubString } from '../../log/redaction.js';

/**
 * Thrown for bad CLI input (missing file, malformed JSON, bad flag): printed without a stack, one
 * line per problem; values from outside in a problem are escaped where it is composed (terminalSafe).
 */
export class CliUsageError extends Error {
  override readonly name = 'CliUsageError';
  readonly problems: readonly string[];

  constructor(problems: string | readonly string[], options?: { cause?: unknown }) {
    const list = typeof problems === 'string' ? [problems] : problems;
    super(list.join('; '), options);
    this.problems = list;
  }
}

/**
 * The lines an error prints: its own problems (composed by us, outside values already escaped), or
 * else its message with every control character escaped (a server's or a library's text may quote
 * stored values). A line never holds a control character: one left in a problem is escaped too. Pure.
 */
export function errorLines(error: Error, message: string): string[] {
  const problems = (error as { problems?: unknown }).problems;
  if (Array.isArray(problems) && problems.length > 0 && problems.every((p) => typeof p === 'string')) {
    return problems.map(controlsEscaped);
  }
  return [terminalSafe(message)];
}

/** commander's usage error (`error: unknown option '--x'`, maybe with a suggestion) as one line of ours. Pure. */
export function usageLine(text: string): string {
  const problem = text
    .trim()
    .replace(/^error: /, '')
    .replace(/\s*\n\s*/g, ' ');
  return `intake-sync: ${controlsEscaped(problem)} (--help lists the commands and options)\n`;
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
  for (const line of errorLines(err, message)) process.stderr.write(`intake-sync: ${line}\n`);
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
    'TlsSettingsError',
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
