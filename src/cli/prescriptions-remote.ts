import type { Command } from 'commander';
import { z } from 'zod';
import type { IntakeClient } from '../intake/client.js';
import {
  prescriptionRequestSchema,
  type PrescriptionRequest,
  type PrescriptionResponse,
} from '../intake/prescription.js';
import { clientFromEnvironment } from './client-context.js';
import { printFields, printJson } from './output.js';
import { readJsonFile } from './read-json-file.js';

/** A prescription file holds `{"prescription": {...}}` (the POST body) or the bare prescription. */
export const prescriptionFileSchema = z.preprocess(
  (value) =>
    typeof value === 'object' && value !== null && 'prescription' in value ? (value as { prescription: unknown }).prescription : value,
  prescriptionRequestSchema,
);

/** Sends one validated prescription (POST /prescriptions, reconciled on ambiguous failures). */
export async function sendPrescription(client: IntakeClient, request: PrescriptionRequest): Promise<PrescriptionResponse> {
  return client.createPrescription(request);
}

/** Registers `send`, `get` and `cancel` on the shared `prescriptions` group. */
export function registerPrescriptionRemoteCommands(prescriptions: Command): void {
  prescriptions
    .command('send')
    .description('POST /prescriptions from a JSON file (validated first; nothing is sent if invalid)')
    .argument('<file>', 'JSON: {"prescription": {...}} or the bare prescription')
    .option('--json', 'print the stored prescription as one JSON line')
    .action(async (file: string, options: { json?: boolean }) => {
      const request = await readJsonFile(file, prescriptionFileSchema, 'prescription');
      show(await sendPrescription(clientFromEnvironment(), request), options.json);
    });

  prescriptions
    .command('get')
    .description('GET /prescriptions/{external_id}')
    .argument('<external_id>', "the prescription's external_id")
    .option('--json', 'print the prescription as one JSON line')
    .action(async (externalId: string, options: { json?: boolean }) => {
      show(await clientFromEnvironment().getPrescription(externalId), options.json);
    });

  prescriptions
    .command('cancel')
    .description('DELETE /prescriptions/{external_id}: flag it for the operator to cancel')
    .argument('<external_id>', "the prescription's external_id")
    .option('--json', 'print the flagged prescription as one JSON line')
    .action(async (externalId: string, options: { json?: boolean }) => {
      show(await clientFromEnvironment().cancelPrescription(externalId), options.json);
    });
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
