import type { PrescriptionRequest, PrescriptionResponse } from './prescription.js';

/**
 * Whether the prescription the operator holds under our external_id is the one we sent. After an
 * ambiguous failure a GET that finds the id proves our POST landed only if nobody else had taken
 * the id before: compare fields the operator stores as sent (dates, codes, NPI), never names,
 * whose spelling an operator may normalise.
 */
export function isSamePrescription(sent: PrescriptionRequest, found: PrescriptionResponse): boolean {
  return (
    found.external_id === sent.external_id &&
    found.written_date === sent.written_date &&
    found.patient.dob === sent.patient.dob &&
    found.medication.ndc === sent.medication.ndc &&
    found.prescriber.npi === sent.prescriber.npi
  );
}
