import type { PrescriptionIdentity, PrescriptionRequest } from '../intake/index.js';

type IdentityFields = Pick<
  PrescriptionIdentity,
  'patient_first_name' | 'patient_last_name' | 'patient_state' | 'patient_dob' | 'prescriber_npi' | 'written_date' | 'drug_ndc'
> & { erx_message_id?: string | null | undefined };

const COMPOSITE_FIELDS = [
  'patient_first_name',
  'patient_last_name',
  'patient_state',
  'patient_dob',
  'prescriber_npi',
  'written_date',
  'drug_ndc',
] as const;

/**
 * The composite part of an identity, normalised (trimmed, lower-cased) into one
 * string: equal keys mean the composite fields match. Used to index subscriptions.
 */
export function compositeKey(identity: IdentityFields): string {
  return COMPOSITE_FIELDS.map((field) => identity[field].trim().toLowerCase()).join('\u0000');
}

/** erx_message_id narrows a match only when both sides carry one. */
export function erxCompatible(a: IdentityFields, b: IdentityFields): boolean {
  const left = a.erx_message_id?.trim();
  const right = b.erx_message_id?.trim();
  return !left || !right || left === right;
}

/** Whether a subscription's identity matches a prescription's identity. */
export function identitiesMatch(a: IdentityFields, b: IdentityFields): boolean {
  return compositeKey(a) === compositeKey(b) && erxCompatible(a, b);
}

/** The identity the operator derives from a received prescription (no eRx message id: it came over the API). */
export function identityOfRequest(request: PrescriptionRequest): PrescriptionIdentity {
  return {
    patient_first_name: request.patient.first_name,
    patient_last_name: request.patient.last_name,
    patient_state: request.patient.address.state,
    patient_dob: request.patient.dob,
    erx_message_id: null,
    prescriber_npi: request.prescriber.npi,
    written_date: request.written_date,
    drug_ndc: request.medication.ndc,
  };
}
