/**
 * An error of starting or running the daemon that carries its own exit code, so the CLI (and any
 * other launcher) maps it without knowing the daemon's error names: 2 for a setting the operator
 * must change, 1 for a failure of the moment. The message names the setting and never carries PHI.
 */
export class DaemonError extends Error {
  override readonly name: string = 'DaemonError';
  readonly exitCode: 1 | 2;

  constructor(message: string, options: { exitCode: 1 | 2; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.exitCode = options.exitCode;
  }
}
