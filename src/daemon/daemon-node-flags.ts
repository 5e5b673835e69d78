/**
 * V8 flags the daemon runs with: package.json "start", the Dockerfile ENTRYPOINT and the systemd unit
 * pass them (a test keeps them in step), and `run` started any other way (npx, a global install,
 * `node dist/cli/main.js run`) restarts itself with them (relaunchWithDaemonFlags). Measured with
 * `npm run bench:memory` (docs/performance.md, "Daemon memory flags"): a 1 MB young generation (V8's
 * default semi-space grows to 16 MB: 220 MB idle on Node.js 24 without a cap), `--optimize-for-size`
 * (smaller heap growth steps and code) and `--no-maglev` (no mid-tier optimized code; TurboFan still
 * optimizes the hot page path) idle at 97.8-99.2 MB instead of 120-128 MB with a 4 MB semi-space, and
 * peak at 115 MB instead of 174 on a 100k-event drain, at the same drain speed within this machine's
 * noise. `--lite-mode` is out: it disables WebAssembly, which fetch's HTTP parser needs. That parser
 * (undici's llhttp, WebAssembly) stays on V8's baseline compiler (`--no-wasm-tier-up
 * --no-wasm-dynamic-tiering`, both: either alone still tiers up): once the daemon had made enough
 * requests, V8 recompiled its one large state-machine function with TurboFan, a 25 MB peak of compiler
 * memory of which about 11 MB stayed resident (idle 98.5-101 MB, 88.7-91 MB without). The parser reads
 * headers and chunk sizes only, so its speed is no part of a page's cost. Nothing caps the old space,
 * so a page of very large payloads (MAX_RESPONSE_BYTES up to 256 MB) still fits.
 */
export const DAEMON_NODE_FLAGS = [
  '--max-semi-space-size=1',
  '--optimize-for-size',
  '--no-maglev',
  '--no-wasm-tier-up',
  '--no-wasm-dynamic-tiering',
] as const;

/** Set in the relaunched process: it never relaunches again, whatever its flags say. */
export const RELAUNCHED_ENV = 'INTAKE_SYNC_RELAUNCHED';

// a V8 flag's name without its value or its `no-`: `--maglev` given is the operator's choice against `--no-maglev`
const flagName = (arg: string) => (arg.split('=')[0] ?? '').replace(/^--no-/, '--');

/** The commands that run the daemon (long-lived): only they are worth a relaunch. */
const DAEMON_COMMANDS = new Set(['run']);

/**
 * The argv to restart this process with (node, its flags, the daemon's flags, the script and its
 * arguments), or undefined when no restart is due: not a daemon command, the flags already given
 * (on the command line or in NODE_OPTIONS), or already relaunched.
 */
export function relaunchArgv(
  execPath: string,
  execArgv: readonly string[],
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): string[] | undefined {
  if (env[RELAUNCHED_ENV] === '1') return undefined;
  const command = argv.slice(2).find((arg) => !arg.startsWith('-'));
  if (command === undefined || !DAEMON_COMMANDS.has(command)) return undefined;
  const given = [...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)];
  const missing = DAEMON_NODE_FLAGS.filter((flag) => !given.some((arg) => flagName(arg) === flagName(flag)));
  if (missing.length === 0) return undefined;
  return [execPath, ...execArgv, ...missing, ...argv.slice(1)];
}

/**
 * Replaces this process (same pid: signals, systemd and Kubernetes see no change) with one started
 * with the daemon's V8 flags, when `relaunchArgv` says one is due. The young generation's size is
 * fixed when V8 sets up its heap, so a flag set later (v8.setFlagsFromString) would not resize it.
 * Needs process.execve (Node.js >= 22.15 / 23.11, Unix); elsewhere the process runs on unchanged.
 * Call it before anything else is loaded or started.
 */
export function relaunchWithDaemonFlags(): void {
  const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never }).execve;
  if (typeof execve !== 'function') return;
  const args = relaunchArgv(process.execPath, process.execArgv, process.argv, process.env);
  if (!args) return;
  execve.call(process, process.execPath, args, { ...process.env, [RELAUNCHED_ENV]: '1' });
}
