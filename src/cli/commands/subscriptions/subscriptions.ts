import type { Command } from 'commander';
import { z } from 'zod';
import { createSubscriptionBodySchema, type Subscription } from '../../../intake/subscription.js';
import { loadConfig } from '../../../config/config.js';
import { createLogger } from '../../../log/log.js';
import { clientForFeedOption, commandFeed, currentSourceClient, withFeedOption } from '../../context/feed-context.js';
import { withStore } from '../../context/store-context.js';
import { printFields, printJson } from '../../context/output.js';
import { registerSubscriptionsMigrateCommand } from './migrate.js';
import { readJsonFile } from '../../context/read-json-file.js';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A subscription file holds `{"subscription": {...}}`, `{"prescription_identity": {...}}`
 * or a bare PrescriptionIdentity; all three become the request's `subscription` object.
 */
export const subscriptionFileSchema = z.preprocess((value) => {
  if (!isObject(value)) return value;
  if (isObject(value.subscription)) return value.subscription;
  if ('prescription_identity' in value) return value;
  return { prescription_identity: value };
}, createSubscriptionBodySchema.shape.subscription);

/** Registers `subscriptions create`, `get` and `cancel`. */
export function registerSubscriptionsCommands(program: Command): void {
  const subscriptions = program
    .command('subscriptions')
    .description('subscribe to events of prescriptions received outside the API (fax, eRx)');

  withFeedOption(subscriptions.command('create'))
    .description('POST /subscriptions from a JSON file')
    .argument('<file>', 'JSON: {"subscription": {...}}, {"prescription_identity": {...}} or a bare identity')
    .option('--backfill', 'also publish events already logged for the prescription')
    .option('--json', 'print the subscription as one JSON line')
    .action(async (file: string, options: { feed?: string; backfill?: boolean; json?: boolean }) => {
      const request = await readJsonFile(file, subscriptionFileSchema, 'subscription');
      if (options.backfill) request.backfill_previous_events = true;
      const config = loadConfig();
      const feed = commandFeed(config, options.feed);
      const log = createLogger({ level: config.LOG_LEVEL });
      // at the version the feed reads now: one created through a draining source would never be moved
      const created = await withStore(config, async ({ db }) =>
        (await currentSourceClient(config, feed, db, log)).createSubscription(request),
      );
      show(created, options.json);
    });

  withFeedOption(subscriptions.command('get'))
    .description('GET /subscriptions/{id}')
    .argument('<id>', 'subscription id')
    .option('--json', 'print the subscription as one JSON line')
    .action(async (id: string, options: { feed?: string; json?: boolean }) => {
      show(await clientForFeedOption(options.feed).getSubscription(id), options.json);
    });

  registerSubscriptionsMigrateCommand(subscriptions);

  withFeedOption(subscriptions.command('cancel'))
    .description('DELETE /subscriptions/{id}: stop publishing its events')
    .argument('<id>', 'subscription id')
    .option('--json', 'print the cancelled subscription as one JSON line')
    .action(async (id: string, options: { feed?: string; json?: boolean }) => {
      show(await clientForFeedOption(options.feed).cancelSubscription(id), options.json);
    });
}

// the identity's patient fields are PHI: only the prescription-side fields are shown
function show(subscription: Subscription, json: boolean | undefined): void {
  if (json) return printJson(subscription);
  printFields([
    ['id', subscription.id],
    ['api_version', subscription.api_version],
    ['backfill_previous_events', subscription.backfill_previous_events],
    ['cancelled_at', subscription.cancelled_at],
    ['prescriber_npi', subscription.prescription_identity.prescriber_npi],
    ['written_date', subscription.prescription_identity.written_date],
    ['drug_ndc', subscription.prescription_identity.drug_ndc],
    ['erx_message_id', subscription.prescription_identity.erx_message_id],
  ]);
}
