import type { PrescriptionRequest, PrescriptionResponse } from '../intake/index.js';

/**
 * The response shape of a prescription (spec, Response shape): prescriber keeps
 * npi and fax only, pharmacy ncpdpid only, `allergies` is always present (null =
 * unknown), sample-only fields are dropped, and cancellation_requested_at is added.
 */
export function toPrescriptionResponse(request: PrescriptionRequest, cancellationRequestedAt: string | null): PrescriptionResponse {
  const { patient, medication } = request;
  return {
    external_id: request.external_id,
    written_date: request.written_date,
    number_of_refills: request.number_of_refills,
    substitutions: request.substitutions,
    sig_text: request.sig_text ?? null,
    note: request.note ?? null,
    originating_entity: request.originating_entity ?? null,
    cancellation_requested_at: cancellationRequestedAt,
    patient: {
      first_name: patient.first_name,
      middle_name: patient.middle_name ?? null,
      last_name: patient.last_name,
      dob: patient.dob,
      gender: patient.gender,
      primary_phone: patient.primary_phone,
      email: patient.email ?? null,
      address: { ...patient.address, address2: patient.address.address2 ?? null },
    },
    medication: {
      name: medication.name,
      ndc: medication.ndc,
      quantity: medication.quantity,
      quantity_unit_code: medication.quantity_unit_code,
      days_supply: medication.days_supply ?? null,
      ...(medication.diagnosis ? { diagnosis: medication.diagnosis } : {}),
    },
    prescriber: { npi: request.prescriber.npi, fax: request.prescriber.fax ?? null },
    pharmacy: { ncpdpid: request.pharmacy.ncpdpid },
    allergies:
      request.allergies?.map((allergy) => ({
        source_of_information: allergy.source_of_information,
        effective_date: allergy.effective_date ?? null,
        adverse_event: allergy.adverse_event,
        drug_product: { code: allergy.drug_product.code ?? null },
        ...(allergy.severity ? { severity: { code: allergy.severity.code ?? null } } : {}),
      })) ?? null,
  };
}
