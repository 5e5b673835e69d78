import type { Command } from 'commander';
import { registerAuditCommands } from './audit.js';
import { registerChangesCommands } from './changes.js';
import { registerCheckpointCommands } from './checkpoint.js';
import { registerConsoleCommand } from './console.js';
import { registerDoctorCommand } from './doctor.js';
import { registerEventsCommands } from './events.js';
import { registerEventsSkipCommand } from './events-skip.js';
import { registerGrantsCommand } from './grants.js';
import { registerMigrateCommand } from './migrate.js';
import { registerPrescriptionLocalCommands } from './prescriptions-local.js';
import { registerPrescriptionRemoteCommands } from './prescriptions-remote.js';
import { registerPrescriptionOverdueCommand } from './prescriptions-overdue.js';
import { registerQuarantineCommands, registerRematchCommand } from './quarantine.js';
import { registerPurgeCommand } from './purge.js';
import { registerResyncCommand } from './resync.js';
import { registerRunCommand } from './run.js';
import { registerSandboxCommand } from './sandbox.js';
import { registerStatusCommand } from './status.js';
import { registerSubscriptionsCommands } from './subscriptions.js';

/**
 * Wires every command group. The `prescriptions` group is shared: remote
 * operations (send/get/cancel) and local ones (import/list) live in separate files.
 */
export function registerCommands(program: Command): void {
  const prescriptions = program.command('prescriptions').description('send, read, cancel, import and list prescriptions');
  registerPrescriptionRemoteCommands(prescriptions);
  registerPrescriptionLocalCommands(prescriptions);
  registerPrescriptionOverdueCommand(prescriptions);
  registerEventsCommands(program);
  registerEventsSkipCommand(program);
  registerSubscriptionsCommands(program);
  registerMigrateCommand(program);
  registerGrantsCommand(program);
  registerAuditCommands(program);
  registerQuarantineCommands(program);
  registerRematchCommand(program);
  registerCheckpointCommands(program);
  registerResyncCommand(program);
  registerPurgeCommand(program);
  registerRunCommand(program);
  registerStatusCommand(program);
  registerChangesCommands(program);
  registerSandboxCommand(program);
  registerDoctorCommand(program);
  registerConsoleCommand(program);
}
