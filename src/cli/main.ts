#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { registerCommands } from './commands.js';
import { reportCliError } from './errors.js';
import { VERSION } from '../version.js';
import { judgeNodeRuntime, UNSUPPORTED_NODE_OVERRIDE } from './node-runtime.js';

const runtime = judgeNodeRuntime(process.versions.node, process.env[UNSUPPORTED_NODE_OVERRIDE]);
if (!runtime.ok) {
  process.stderr.write(`${runtime.message}\n`);
  process.exit(2);
}
if (runtime.warning) process.stderr.write(`${runtime.warning}\n`);

const program = new Command()
  .name('intake-sync')
  .description('Sync a prescriber vendor Postgres with the Prescription Intake API (2024-12-10)')
  .version(VERSION, '-V, --version', 'print the version and exit')
  .showHelpAfterError()
  .exitOverride();

registerCommands(program);

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
}
