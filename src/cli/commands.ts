import type { Command } from 'commander';

/**
 * Wires every command group. The `prescriptions` group is shared: remote
 * operations (send/get/cancel) and local ones (import/list) live in separate files.
 */
export function registerCommands(program: Command): void {
  const prescriptions = program.command('prescriptions').description('send, read, cancel, import and list prescriptions');
  void prescriptions;
}
