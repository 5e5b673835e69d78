import type { PrescriptionIdentity } from '../../intake/identity.js';

/**
 * The identity of a local prescription from a row selecting its identity columns
 * (patient_first_name ... erx_message_id): what a re-subscription sends to the operator.
 */
export function identityFromRow(r: Record<string, unknown>): PrescriptionIdentity {
  return {
    patient_first_name: r.patient_first_name as string,
    patient_last_name: r.patient_last_name as string,
    patient_state: r.patient_state as string,
    patient_dob: r.patient_dob as string,
    prescriber_npi: r.prescriber_npi as string,
    written_date: r.written_date as string,
    drug_ndc: r.drug_ndc as string,
    erx_message_id: (r.erx_message_id as string | null) ?? null,
  };
}
