import { z } from 'zod';
import { nonEmpty, npi } from './fields.js';

/** PrescriptionIdentity as sent in requests (POST /subscriptions). */
export const prescriptionIdentityRequestSchema = z.object({
  patient_first_name: nonEmpty,
  patient_last_name: nonEmpty,
  patient_state: nonEmpty,
  patient_dob: nonEmpty,
  erx_message_id: z.string().nullish(),
  prescriber_npi: npi,
  written_date: nonEmpty,
  drug_ndc: nonEmpty,
});
export type PrescriptionIdentityInput = z.input<typeof prescriptionIdentityRequestSchema>;

/** PrescriptionIdentity as received in responses and events: tolerant of new keys. */
export const prescriptionIdentitySchema = z.looseObject({
  patient_first_name: z.string(),
  patient_last_name: z.string(),
  patient_state: z.string(),
  patient_dob: z.string(),
  erx_message_id: z.string().nullish(),
  prescriber_npi: z.string(),
  written_date: z.string(),
  drug_ndc: z.string(),
});
export type PrescriptionIdentity = z.infer<typeof prescriptionIdentitySchema>;
