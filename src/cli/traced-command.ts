import { Command } from 'commander';
import { inSpan, SpanKind } from '../telemetry/spans.js';

/**
 * The commands that change data (the store, the operator, the roles): each run is one span, the root
 * of whatever it does (a page, a request). Reading commands and `run` (whose work has spans of its
 * own, poll by poll) have none.
 */
export const DATA_CHANGING_COMMANDS: ReadonlySet<string> = new Set([
  'prescriptions send',
  'prescriptions cancel',
  'prescriptions import',
  'subscriptions create',
  'subscriptions cancel',
  'subscriptions migrate',
  'events skip',
  'checkpoint reset',
  'quarantine resolve',
  'quarantine dismiss',
  'rematch',
  'resync',
  'purge',
  'migrate',
  'grants',
  'feeds pause',
  'feeds resume',
]);

/** `prescriptions send` for the command `command` (its names below the program). Pure. */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at?.parent; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}

/**
 * The program's Command: every subcommand it creates is one too, and the action of a data-changing
 * command runs inside a span named after it (`intake-sync prescriptions send`), so the CLI is traced
 * where commands are registered, not in each command. Without OTEL_* the span is the API's no-op one.
 */
export class TracedCommand extends Command {
  override createCommand(name?: string): Command {
    return new TracedCommand(name);
  }

  override action(fn: (...args: unknown[]) => void | Promise<void>): this {
    return super.action(async (...args: unknown[]) => {
      const path = commandPath(this);
      if (!DATA_CHANGING_COMMANDS.has(path)) return fn(...args);
      await inSpan(
        `intake-sync ${path}`,
        { kind: SpanKind.INTERNAL, root: true, attributes: { 'intake_sync.command': path } },
        async (span) => {
          await fn(...args);
          if (typeof process.exitCode === 'number') span.setAttribute('intake_sync.exit_code', process.exitCode);
        },
      );
    });
  }
}
