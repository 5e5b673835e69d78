import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `intake-sync ARGS` as its own process (TypeScript via tsx) with only the
 * given INTAKE_* variables, so the developer's environment cannot leak in.
 */
export function runCli(args: readonly string[], env: Record<string, string>): Promise<CliResult> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('INTAKE_') && !key.startsWith('HTTP_TIMEOUT')),
  );
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', ...args],
      { cwd: REPO_ROOT, env: { ...inherited, LOG_LEVEL: 'warn', ...env }, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
