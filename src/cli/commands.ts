import type { Command } from 'commander';

/**
 * The command groups, in the order `--help` lists them: each loads its command files only when
 * asked for. A command's files pull in its whole slice of the product (the daemon, the console, the
 * store, the HTTP client), so loading every group for every command made `intake-sync --version`
 * load 849 modules and take 0.8-1 s; a command now loads its own group only.
 */
const GROUPS: ReadonlyArray<readonly [name: string, register: (program: Command) => Promise<void>]> = [
  [
    'prescriptions',
    async (program) => {
      const prescriptions = program.command('prescriptions').description('send, read, cancel, import and list prescriptions');
      (await import('./commands/prescriptions/remote.js')).registerPrescriptionRemoteCommands(prescriptions);
      (await import('./commands/prescriptions/local.js')).registerPrescriptionLocalCommands(prescriptions);
      (await import('./commands/prescriptions/overdue.js')).registerPrescriptionOverdueCommand(prescriptions);
    },
  ],
  [
    'events',
    async (program) => {
      (await import('./commands/events/events.js')).registerEventsCommands(program);
      (await import('./commands/events/skip.js')).registerEventsSkipCommand(program);
    },
  ],
  ['subscriptions', async (program) => (await import('./commands/subscriptions/subscriptions.js')).registerSubscriptionsCommands(program)],
  ['migrate', async (program) => (await import('./commands/migrate/migrate.js')).registerMigrateCommand(program)],
  ['grants', async (program) => (await import('./commands/grants/grants.js')).registerGrantsCommand(program)],
  ['audit', async (program) => (await import('./commands/audit/audit.js')).registerAuditCommands(program)],
  ['quarantine', async (program) => (await import('./commands/quarantine/quarantine.js')).registerQuarantineCommands(program)],
  ['rematch', async (program) => (await import('./commands/quarantine/quarantine.js')).registerRematchCommand(program)],
  ['checkpoint', async (program) => (await import('./commands/checkpoint/checkpoint.js')).registerCheckpointCommands(program)],
  ['resync', async (program) => (await import('./commands/resync/resync.js')).registerResyncCommand(program)],
  ['purge', async (program) => (await import('./commands/purge/purge.js')).registerPurgeCommand(program)],
  ['run', async (program) => (await import('./commands/run/run.js')).registerRunCommand(program)],
  ['status', async (program) => (await import('./commands/status/status.js')).registerStatusCommand(program)],
  ['feeds', async (program) => (await import('./commands/feeds/feeds.js')).registerFeedsCommands(program)],
  ['changes', async (program) => (await import('./commands/changes/changes.js')).registerChangesCommands(program)],
  ['sandbox', async (program) => (await import('./commands/sandbox/sandbox.js')).registerSandboxCommand(program)],
  ['doctor', async (program) => (await import('./commands/doctor/doctor.js')).registerDoctorCommand(program)],
  ['console', async (program) => (await import('./commands/console/console.js')).registerConsoleCommand(program)],
];

/** Every top-level command name, one per group, in the listing order. */
export const COMMAND_NAMES: readonly string[] = GROUPS.map(([name]) => name);

/**
 * Pure: the groups to load for these arguments (after node and the script). The program itself has
 * only -h and -V, which take no value, so the first argument not starting with `-` is the command.
 * No command (`--help`, no arguments), `help`, or a name no group has (commander then suggests the
 * nearest): every group, so the listing and the suggestion see every command.
 */
export function groupsFor(args: readonly string[]): readonly string[] {
  const name = args.find((arg) => !arg.startsWith('-'));
  if (name !== undefined && COMMAND_NAMES.includes(name)) return [name];
  if (name === undefined && args.some((arg) => arg === '-V' || arg === '--version')) return [];
  return COMMAND_NAMES;
}

/** Wires the command groups `names` names (all of them when not given), in the listing's order. */
export async function registerCommands(program: Command, names: readonly string[] = COMMAND_NAMES): Promise<void> {
  for (const [name, register] of GROUPS) {
    if (names.includes(name)) await register(program);
  }
}
