#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { registerCommands } from './commands.js';
import { reportCliError } from './errors.js';

const program = new Command()
  .name('intake-sync')
  .description('Sync a prescriber vendor Postgres with the Prescription Intake API (2024-12-10)')
  .showHelpAfterError()
  .exitOverride();

registerCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // help and version exit 0; usage errors were already printed by commander
    process.exitCode = error.exitCode;
  } else {
    process.exitCode = reportCliError(error);
  }
}
