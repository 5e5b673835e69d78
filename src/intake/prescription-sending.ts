import type { Logger } from 'pino';
import { NotFoundError } from './errors/not-found-error.js';
import { UnprocessableEntityError } from './errors/unprocessable-entity-error.js';
import type { HttpTransport } from './http-transport.js';
import { intakePaths } from './paths.js';
import { prescriptionEnvelopeSchema, type PrescriptionRequest, type PrescriptionResponse } from './prescription.js';
import { mayHaveBeenProcessed } from './retry-policy.js';
import type { RetryRunner } from './retry-runner.js';
import { isSamePrescription } from './same-prescription.js';

/** How a send continues from an earlier one (the outbox: another process's attempt may have landed). */
export interface SendOnceOptions {
  /** an earlier attempt may have reached the operator: look the external_id up before any POST */
  mayHaveLanded?: boolean;
  /**
   * accept a prescription found by external_id only when its fields match ours (isSamePrescription):
   * one that differs was somebody else's, so the POST's 422 stands
   */
  requireSameFields?: boolean;
  /** told when the prescription was found by GET instead of created by this call's POST */
  onFoundExisting?: () => void;
}

/**
 * POST /prescriptions without ever creating the prescription twice. The API has
 * no idempotency key, but external_id is ours and unique: once an attempt may
 * have landed (timeout, reset, 5xx, torn 201), every later attempt first asks
 * GET /prescriptions/{external_id}. Found means the POST landed: return it.
 * 404 means it did not: POST again. A 422 after such an attempt (the duplicate
 * external_id refused) is settled the same way.
 */
export async function sendPrescriptionOnce(
  deps: { transport: HttpTransport; runner: RetryRunner; logger?: Logger },
  prescription: PrescriptionRequest,
  signal?: AbortSignal,
  options: SendOnceOptions = {},
): Promise<PrescriptionResponse> {
  const externalId = prescription.external_id;
  let mayHaveLanded = options.mayHaveLanded ?? false;

  const findExisting = async (): Promise<PrescriptionResponse | undefined> => {
    try {
      const found = await deps.transport.send({
        method: 'GET',
        path: intakePaths.prescription(externalId),
        schema: prescriptionEnvelopeSchema,
        signal,
      });
      if (options.requireSameFields && !isSamePrescription(prescription, found.prescription)) {
        deps.logger?.warn({ external_id: externalId }, 'the operator holds a different prescription under this external_id: not ours');
        return undefined;
      }
      deps.logger?.warn({ external_id: externalId }, 'POST /prescriptions had landed despite the failure: using the stored prescription');
      options.onFoundExisting?.();
      return found.prescription;
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
  };

  const attempt = async (): Promise<PrescriptionResponse> => {
    if (mayHaveLanded) {
      const existing = await findExisting();
      if (existing) return existing;
    }
    try {
      const created = await deps.transport.send({
        method: 'POST',
        path: intakePaths.prescriptions,
        json: { prescription },
        schema: prescriptionEnvelopeSchema,
        signal,
      });
      return created.prescription;
    } catch (error) {
      if (error instanceof UnprocessableEntityError && mayHaveLanded) {
        const existing = await findExisting();
        if (existing) return existing;
      }
      if (mayHaveBeenProcessed(error)) mayHaveLanded = true;
      throw error;
    }
  };

  return deps.runner.run('reconciled', { method: 'POST', path: intakePaths.prescriptions }, attempt, signal);
}
