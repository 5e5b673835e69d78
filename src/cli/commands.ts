import type { Command } from 'commander';
import { registerAuditCommands } from './commands/audit/audit.js';
import { registerChangesCommands } from './commands/changes/changes.js';
import { registerCheckpointCommands } from './commands/checkpoint/checkpoint.js';
import { registerConsoleCommand } from './commands/console/console.js';
import { registerDoctorCommand } from './commands/doctor/doctor.js';
import { registerEventsCommands } from './commands/events/events.js';
import { registerEventsSkipCommand } from './commands/events/skip.js';
import { registerFeedsCommands } from './commands/feeds/feeds.js';
import { registerGrantsCommand } from './commands/grants/grants.js';
import { registerMigrateCommand } from './commands/migrate/migrate.js';
import { registerPrescriptionLocalCommands } from './commands/prescriptions/local.js';
import { registerPrescriptionRemoteCommands } from './commands/prescriptions/remote.js';
import { registerPrescriptionOverdueCommand } from './commands/prescriptions/overdue.js';
import { registerQuarantineCommands, registerRematchCommand } from './commands/quarantine/quarantine.js';
import { registerPurgeCommand } from './commands/purge/purge.js';
import { registerResyncCommand } from './commands/resync/resync.js';
import { registerRunCommand } from './commands/run/run.js';
import { registerSandboxCommand } from './commands/sandbox/sandbox.js';
import { registerStatusCommand } from './commands/status/status.js';
import { registerSubscriptionsCommands } from './commands/subscriptions/subscriptions.js';

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
  registerFeedsCommands(program);
  registerChangesCommands(program);
  registerSandboxCommand(program);
  registerDoctorCommand(program);
  registerConsoleCommand(program);
}
