import { parseSandboxHandshake, sandboxArgs } from '../sandbox-handshake.js';
import type { OutputCapture } from './capture.js';
import { PROCESS_START_BUDGET_MS, spawnCli, type CliChild } from './cli-process.js';
import { FatalProbeError } from '../fatal-probe-error.js';
import { SandboxAdmin } from './sandbox-admin.js';
import { waitFor } from '../wait-for.js';

/** How a client reaches the simulated operator API. */
export interface ApiAccess {
  baseUrl: string;
  key: string;
  secret: string;
}

export interface SandboxProcess extends ApiAccess {
  admin: SandboxAdmin;
  child: CliChild;
  /** SIGTERM, then SIGKILL if it lingers */
  stop(): Promise<void>;
}

/**
 * Starts `intake-sync sandbox --port 0 --json` as its own process and reads the
 * one-line handshake. The handshake carries the secret by contract, so it is
 * parsed here and deliberately kept out of the leak scan (stdout goes to 'output').
 */
export async function startSandboxProcess(capture: OutputCapture, credentials: { key: string; secret: string }): Promise<SandboxProcess> {
  const child = spawnCli(sandboxArgs(credentials), {
    label: 'sandbox',
    capture,
    stdoutKind: 'output',
    env: { LOG_LEVEL: 'debug' },
  });
  const line = await waitFor(
    () => {
      const out = child.stdout();
      const newline = out.indexOf('\n');
      if (newline >= 0) return out.slice(0, newline);
      if (!child.isRunning()) throw new FatalProbeError(`sandbox exited before its handshake; stderr: ${child.stderr().slice(-2000)}`);
      return undefined;
    },
    { what: 'the sandbox handshake line on stdout', timeoutMs: PROCESS_START_BUDGET_MS, intervalMs: 50, probeErrors: 'retry' },
  );
  const handshake = parseSandboxHandshake(line);
  return {
    baseUrl: handshake.baseUrl,
    key: handshake.key,
    secret: handshake.secret,
    admin: new SandboxAdmin(handshake.adminUrl),
    child,
    async stop() {
      child.signal('SIGTERM');
      const timer = setTimeout(() => child.signal('SIGKILL'), 5_000);
      await child.exited;
      clearTimeout(timer);
    },
  };
}
