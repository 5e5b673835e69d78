import type { Command } from 'commander';
import { z } from 'zod';
import type { IntakeClient } from '../../../intake/client.js';
import { prescriptionRequestSchema, type PrescriptionRequest, type PrescriptionResponse } from '../../../intake/prescription.js';
import { loadConfig, type Config } from '../../../config/config.js';
import type { FeedConfig } from '../../../config/feeds-file.js';
import { recordAudit } from '../../../store-api/audit/audit-entries.js';
import { DEFAULT_FEED } from '../../../db/feed-name.js';
import { createLogger, type Logger } from '../../../log/log.js';
import { markCancellationRequested, recordSentPrescription } from '../../../sync/matching/sent-prescriptions.js';
import { joinMigrationAfterSend } from '../../../store-api/feeds/migration-join.js';
import { commandFeed, currentSource, feedClient, withFeedOption } from '../../context/feed-context.js';
import { withStore } from '../../context/store-context.js';
import { printFields, printJson } from '../../context/output.js';
import { readJsonFile } from '../../context/read-json-file.js';

/** A prescription file holds `{"prescription": {...}}` (the POST body) or the bare prescription. */
export const prescriptionFileSchema = z.preprocess(
  (value) =>
    typeof value === 'object' && value !== null && 'prescription' in value ? (value as { prescription: unknown }).prescription : value,
  prescriptionRequestSchema,
);

/**
 * Sends one validated prescription (POST /prescriptions, reconciled on ambiguous failures) through the
 * feed's current source (its automatic subscription is at the version the feed reads: see
 * currentSourceClient) and records it in the local store so its events match. Recorded after the
 * POST: a prescription the operator refused must not linger locally, and an event that arrives before
 * the local row is quarantined as unmatched and rematched when the row lands.
 */
export async function sendPrescription(
  config: Config,
  feed: FeedConfig,
  request: PrescriptionRequest,
  logger?: Logger,
): Promise<PrescriptionResponse> {
  return withStore(config, async ({ db }) => {
    const { client, baseUrl } = await currentSource(config, feed, db, logger);
    const response = await client.createPrescription(request);
    await recordSentPrescription(db, request, response, undefined, { feed: feed.name, audit: { action: 'prescription.send' } });
    // a migration that started during the POST left its automatic subscription at the old version
    if (await joinMigrationAfterSend(db, feed.name, baseUrl, request.external_id)) {
      process.stderr.write(
        `intake-sync: external_id ${request.external_id} was sent through ${baseUrl} while feed ${feed.name} moved to another version: ` +
          `it joined the migration; rerun 'intake-sync subscriptions migrate' to move its subscription\n`,
      );
    }
    return response;
  });
}

/**
 * DELETE /prescriptions/{external_id}, mirrored on the local row when there is one, and audited
 * (`prescription.cancel`) in the same transaction as the local change.
 */
export async function cancelPrescription(client: IntakeClient, externalId: string, feed?: string): Promise<PrescriptionResponse> {
  const response = await client.cancelPrescription(externalId);
  const at = response.cancellation_requested_at;
  const audit = { action: 'prescription.cancel' };
  await withStore(loadConfig(), async (database) => {
    if (at) await markCancellationRequested(database.db, externalId, at, { feed, audit });
    else {
      const entry = { ...audit, feed: feed ?? DEFAULT_FEED, subject: externalId, detail: { local_row: false, flagged: false } };
      await recordAudit(database.db, database.names, entry);
    }
  });
  return response;
}

/** Registers `send`, `get` and `cancel` on the shared `prescriptions` group. */
export function registerPrescriptionRemoteCommands(prescriptions: Command): void {
  withFeedOption(prescriptions.command('send'))
    .description('POST /prescriptions from a JSON file (validated first; nothing is sent if invalid) and record it locally')
    .argument('<file>', 'JSON: {"prescription": {...}} or the bare prescription')
    .option('--json', 'print the stored prescription as one JSON line')
    .action(async (file: string, options: { feed?: string; json?: boolean }) => {
      const config = loadConfig();
      const feed = commandFeed(config, options.feed);
      const request = await readJsonFile(file, prescriptionFileSchema, 'prescription');
      show(await sendPrescription(config, feed, request, createLogger({ level: config.LOG_LEVEL })), options.json);
    });

  withFeedOption(prescriptions.command('get'))
    .description('GET /prescriptions/{external_id}')
    .argument('<external_id>', "the prescription's external_id")
    .option('--json', 'print the prescription as one JSON line')
    .action(async (externalId: string, options: { feed?: string; json?: boolean }) => {
      show(await feedOf(options.feed).client.getPrescription(externalId), options.json);
    });

  withFeedOption(prescriptions.command('cancel'))
    .description('DELETE /prescriptions/{external_id}: flag it for the operator to cancel (and the local record)')
    .argument('<external_id>', "the prescription's external_id")
    .option('--json', 'print the flagged prescription as one JSON line')
    .action(async (externalId: string, options: { feed?: string; json?: boolean }) => {
      const { client, feed } = feedOf(options.feed);
      show(await cancelPrescription(client, externalId, feed), options.json);
    });
}

/** The feed `--feed` names (see feed-context.ts) and a client for its account; logs (retries) on stderr. */
function feedOf(requested: string | undefined): { client: IntakeClient; feed: string } {
  const config = loadConfig();
  const feed = commandFeed(config, requested);
  return { client: feedClient(config, feed, createLogger({ level: config.LOG_LEVEL })), feed: feed.name };
}

// the readable view leaves the patient (PHI) out; --json prints the whole response
function show(prescription: PrescriptionResponse, json: boolean | undefined): void {
  if (json) return printJson(prescription);
  printFields([
    ['external_id', prescription.external_id],
    ['written_date', prescription.written_date],
    ['ndc', prescription.medication.ndc],
    ['cancellation_requested_at', prescription.cancellation_requested_at],
  ]);
}
