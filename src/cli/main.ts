#!/usr/bin/env node
import { judgeNodeRuntime, UNSUPPORTED_NODE_OVERRIDE } from '../daemon/node-runtime.js';
import { relaunchWithDaemonFlags } from '../daemon/daemon-node-flags.js';

// first: an unsupported Node.js is refused before anything else loads or runs
const runtime = judgeNodeRuntime(process.versions.node, process.env[UNSUPPORTED_NODE_OVERRIDE]);
if (!runtime.ok) {
  process.stderr.write(`${runtime.message}\n`);
  process.exit(2);
}
if (runtime.warning) process.stderr.write(`${runtime.warning}\n`);
// then, before the commands load: `run` without the daemon's V8 flags restarts itself with them
relaunchWithDaemonFlags();
const { CommanderError } = await import('commander');
const { reportCliError, usageLine } = await import('./context/errors.js');
// a `.env` in the working directory, as Node reads one: the real environment wins (docs/configuration.md)
try {
  const { readEnvFile } = await import('../config/env-file.js');
  readEnvFile();
} catch (error) {
  process.exit(reportCliError(error));
}
// OTEL_* (docs/operations.md, "Tracing"): with none set, nothing of the telemetry settings or the SDK loads
let telemetry: import('../telemetry/start.js').Telemetry | undefined;
if (Object.entries(process.env).some(([key, value]) => key.startsWith('OTEL_') && value)) {
  try {
    const { loadTelemetryConfig } = await import('../config/config.js');
    const { startTelemetry } = await import('../telemetry/start.js');
    telemetry = await startTelemetry(loadTelemetryConfig(process.env));
  } catch (error) {
    process.exit(reportCliError(error));
  }
}
const { groupsFor, registerCommands } = await import('./commands.js');
const { TracedCommand } = await import('./traced-command.js');
const { VERSION } = await import('../version.js');

const program = new TracedCommand()
  .name('intake-sync')
  .description('Sync a prescriber vendor Postgres with the Prescription Intake API (2024-12-10)')
  .version(VERSION, '-V, --version', 'print the version and exit')
  .exitOverride()
  // a usage error is one line, as every other error, pointing at the help instead of printing it
  .configureOutput({ outputError: (text, write) => write(usageLine(text)) });

// only the group of the command asked for loads (commands.ts)
await registerCommands(program, groupsFor(process.argv.slice(2)));

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // help and version exit 0; usage errors (a missing required option, an unknown one) were already
    // printed by commander and are bad input: exit 2, as every other bad argument (docs/commands.md)
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } else {
    process.exitCode = reportCliError(error);
  }
} finally {
  // the spans still buffered leave before the process does
  await telemetry?.shutdown();
}
