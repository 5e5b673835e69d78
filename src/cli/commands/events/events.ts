import type { Command } from 'commander';
import type { IntakeEvent } from '../../../intake/event.js';
import { clientForFeedOption, withFeedOption } from '../../context/feed-context.js';
import { CliUsageError } from '../../context/errors.js';
import { printFields, printJson, printTable, type Cell } from '../../context/output.js';

/** `--limit`: an integer 1..250 (the API's bounds), checked before anything is sent. */
export function parseLimit(value: string): number {
  const limit = Number(value);
  if (!/^\d+$/.test(value.trim()) || limit < 1 || limit > 250) {
    throw new CliUsageError(`--limit must be an integer from 1 to 250 (got ${JSON.stringify(value)})`);
  }
  return limit;
}

// events arrive unvalidated (one bad event must not hide the page): print what is there
function textField(event: unknown, key: string): Cell {
  const value = typeof event === 'object' && event !== null ? (event as Record<string, unknown>)[key] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** Registers `events list` and `events get`. */
export function registerEventsCommands(program: Command): void {
  const events = program.command('events').description('read the operator event feed');

  withFeedOption(events.command('list'))
    .description('one page of GET /events')
    .option('--iterator <iterator>', 'resume after this iterator (from meta.iterator)')
    .option('--limit <n>', 'page size, 1 to 250 (operator default 250)')
    .option('--json', 'print the response as one JSON line')
    .action(async (options: { feed?: string; iterator?: string; limit?: string; json?: boolean }) => {
      const limit = options.limit === undefined ? undefined : parseLimit(options.limit);
      const page = await clientForFeedOption(options.feed).listEvents({ iterator: options.iterator, limit });
      if (options.json) return printJson(page);
      const rows = page.events.map((event) => ({
        id: textField(event, 'id'),
        name: textField(event, 'name'),
        occurred_at: textField(event, 'occurred_at'),
        subscription_id: textField(event, 'subscription_id'),
      }));
      printTable(['id', 'name', 'occurred_at', 'subscription_id'], rows);
      printFields([
        ['events', page.events.length],
        ['iterator', page.meta.iterator],
        ['done', page.meta.done],
      ]);
    });

  withFeedOption(events.command('get'))
    .description('GET /events/{id}')
    .argument('<id>', 'event id')
    .option('--json', 'print the event as one JSON line')
    .action(async (id: string, options: { feed?: string; json?: boolean }) => {
      const event = await clientForFeedOption(options.feed).getEvent(id);
      if (options.json) return printJson(event);
      printEvent(event);
    });
}

// the identity's patient fields are PHI: only the prescription-side fields are shown
function printEvent(event: IntakeEvent): void {
  printFields([
    ['id', event.id],
    ['name', event.name],
    ['occurred_at', event.occurred_at],
    ['subscription_id', event.subscription_id],
    ['api_version', event.api_version],
    ['pharmacy_npi', event.pharmacy_npi],
    ['prescriber_npi', event.prescription_identity.prescriber_npi],
    ['written_date', event.prescription_identity.written_date],
    ['drug_ndc', event.prescription_identity.drug_ndc],
    ['erx_message_id', event.prescription_identity.erx_message_id],
    ['payload', JSON.stringify(event.payload)],
  ]);
}
