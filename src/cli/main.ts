#!/usr/bin/env node
import { relaunchWithDaemonFlags } from './daemon-node-flags.js';

// first, before the commands load: `run` without the daemon's V8 flags restarts itself with them
relaunchWithDaemonFlags();
const { Command, CommanderError } = await import('commander');
const { registerCommands } = await import('./commands.js');
const { reportCliError } = await import('./errors.js');
const { VERSION } = await import('../version.js');

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
