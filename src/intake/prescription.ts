import { z } from 'zod';
import {
  OPERATOR_PHARMACY_NCPDPID,
  OPERATOR_PHARMACY_NPI,
  address,
  isoDate,
  ndc,
  nonEmpty,
  npi,
  usPhone,
  usState,
  zip5,
} from './fields.js';

// Request shapes are strict about everything the spec requires. Unknown keys are
// stripped (never forwarded); the sample-only fields the spec shows are accepted.

export const patientSchema = z.object({
  first_name: nonEmpty,
  middle_name: z.string().nullish(),
  last_name: nonEmpty,
  dob: isoDate,
  gender: z.enum(['M', 'F', 'N', 'U'], { message: 'must be one of M, F, N, U' }),
  primary_phone: usPhone,
  email: z.email({ message: 'must be an email address' }).nullish(),
  address,
});
export type Patient = z.infer<typeof patientSchema>;

export const diagnosisSchema = z
  .object({
    primary_icd10_code: nonEmpty,
    primary_icd10_description: nonEmpty,
    secondary_icd10_code: z.string().nullish(),
    secondary_icd10_description: z.string().nullish(),
  })
  .superRefine((d, ctx) => {
    // A code without its description (or the reverse) cannot be interpreted by the pharmacy.
    if (Boolean(d.secondary_icd10_code) !== Boolean(d.secondary_icd10_description)) {
      ctx.addIssue({
        code: 'custom',
        path: [d.secondary_icd10_code ? 'secondary_icd10_description' : 'secondary_icd10_code'],
        message: 'secondary code and description must be given together',
      });
    }
  });

export const medicationSchema = z.object({
  name: nonEmpty,
  ndc,
  quantity: nonEmpty,
  quantity_unit_code: nonEmpty,
  days_supply: z.number().int().positive().nullish(),
  diagnosis: diagnosisSchema.optional(),
});

export const prescriberSchema = z.object({
  suffix: z.string().nullish(),
  npi,
  primary_phone: usPhone,
  fax: usPhone.nullish(),
  // sample-only fields
  first_name: z.string().optional(),
  middle_name: z.string().nullish(),
  last_name: z.string().optional(),
  address: address.optional(),
});

export const pharmacySchema = z.object({
  npi: z.literal(OPERATOR_PHARMACY_NPI, { message: `must be the operator pharmacy NPI ${OPERATOR_PHARMACY_NPI}` }),
  ncpdpid: z.literal(OPERATOR_PHARMACY_NCPDPID, {
    message: `must be the operator pharmacy NCPDP ID ${OPERATOR_PHARMACY_NCPDPID}`,
  }),
  primary_phone: usPhone,
  fax: usPhone.nullish(),
  // sample-only fields
  name: z.string().optional(),
  address: address.optional(),
});

export const allergySchema = z.object({
  source_of_information: z.enum(['C', 'P', 'O'], { message: 'must be one of C, P, O' }),
  effective_date: z.string().nullish(),
  adverse_event: z.object({ text: nonEmpty, code: z.string().nullish() }),
  drug_product: z.object({ code: z.string().nullish(), text: z.string().optional() }),
  severity: z.object({ code: z.string().nullish(), text: z.string().optional() }).optional(),
});

export const prescriptionRequestSchema = z.object({
  external_id: nonEmpty,
  written_date: isoDate,
  number_of_refills: z.number().int().min(0),
  substitutions: z.number().int().min(0).max(9),
  sig_text: z.string().optional(),
  note: z.string().optional(),
  originating_entity: z.string().optional(),
  patient: patientSchema,
  medication: medicationSchema,
  prescriber: prescriberSchema,
  pharmacy: pharmacySchema,
  // empty array = No Known Allergies; null/omitted = unknown history
  allergies: z.array(allergySchema).nullish(),
});
export type PrescriptionRequest = z.infer<typeof prescriptionRequestSchema>;
export type PrescriptionRequestInput = z.input<typeof prescriptionRequestSchema>;

/** POST /prescriptions body. */
export const createPrescriptionBodySchema = z.object({ prescription: prescriptionRequestSchema });

// Response shapes are tolerant where the operator may grow: unknown keys pass
// through (looseObject), formats the spec leaves "not shown" are plain strings.

const responseAddress = z.looseObject({
  address1: z.string(),
  address2: z.string().nullish(),
  city: z.string(),
  state: usState,
  zip: zip5,
});

export const prescriptionResponseSchema = z.looseObject({
  external_id: z.string(),
  written_date: z.string(),
  number_of_refills: z.number().int(),
  substitutions: z.number().int(),
  sig_text: z.string().nullish(),
  note: z.string().nullish(),
  originating_entity: z.string().nullish(),
  cancellation_requested_at: z.string().nullable(),
  patient: z.looseObject({
    first_name: z.string(),
    middle_name: z.string().nullish(),
    last_name: z.string(),
    dob: isoDate,
    gender: z.string(),
    primary_phone: z.string(),
    email: z.string().nullish(),
    address: responseAddress,
  }),
  medication: z.looseObject({
    name: z.string(),
    ndc: z.string(),
    quantity: z.string(),
    quantity_unit_code: z.string(),
    days_supply: z.number().int().nullish(),
    diagnosis: z.looseObject({}).nullish(),
  }),
  prescriber: z.looseObject({ npi: z.string(), fax: z.string().nullable() }),
  pharmacy: z.looseObject({ ncpdpid: z.string() }),
  // required in responses: null means the allergy history is unknown
  allergies: z.array(z.looseObject({})).nullable(),
});
export type PrescriptionResponse = z.infer<typeof prescriptionResponseSchema>;

export const prescriptionEnvelopeSchema = z.looseObject({ prescription: prescriptionResponseSchema });
