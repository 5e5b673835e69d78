import {
  OPERATOR_NDCS,
  OPERATOR_PHARMACY_NCPDPID,
  OPERATOR_PHARMACY_NPI,
  US_STATES,
  type PrescriptionIdentity,
  type PrescriptionRequest,
} from '../intake/index.js';
import { identityOfRequest } from './identity-match.js';

// Deterministic, obviously synthetic prescriptions: the sandbox seeds them, and
// benchmarks and tests register the same ones locally by index.

const DAY_MS = 24 * 60 * 60 * 1000;
const DOB_EPOCH = Date.UTC(1940, 0, 1);
const WRITTEN_EPOCH = Date.UTC(2024, 0, 1);
const GENDERS = ['M', 'F', 'N', 'U'] as const;

/** A letters-only token unique per i: base-26 digits spelled a..z ("Zyx" style synthetic names). */
function letters(i: number): string {
  const digits = i.toString(26);
  let out = '';
  for (const ch of digits) out += String.fromCharCode(97 + Number.parseInt(ch, 26));
  return out;
}

function capitalized(token: string): string {
  return token.charAt(0).toUpperCase() + token.slice(1);
}

function isoDay(epochMs: number, days: number): string {
  return new Date(epochMs + days * DAY_MS).toISOString().slice(0, 10);
}

/** A valid NPI for a 9-digit base: Luhn check digit over 80840 + base. */
function npiFor(base9: number): string {
  const base = String(base9).padStart(9, '0');
  const digits = `80840${base}`;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return `${base}${(10 - (sum % 10)) % 10}`;
}

/** Whether the 0-based seed index i takes the rejection path for `rejectEvery` (every k-th: i = k-1, 2k-1, ...). */
export function seedRejects(i: number, rejectEvery: number | undefined): boolean {
  return rejectEvery !== undefined && rejectEvery > 0 && (i + 1) % rejectEvery === 0;
}

// Every field that enters the identity is derived here, once, so sampleIdentity(i)
// and identityOf(samplePrescription(i)) cannot drift apart.
function identityParts(i: number): {
  token: string;
  firstName: string;
  lastName: string;
  dob: string;
  state: (typeof US_STATES)[number];
  writtenDate: string;
  npi: string;
  ndc: (typeof OPERATOR_NDCS)[number];
} {
  const token = letters(i);
  return {
    token,
    firstName: `Testpat${token}`,
    lastName: `Synthetic${capitalized(token)}`,
    dob: isoDay(DOB_EPOCH, i % 20_000),
    state: US_STATES[i % US_STATES.length] ?? 'CA',
    writtenDate: isoDay(WRITTEN_EPOCH, i % 365),
    npi: npiFor(100_000_000 + (i % 800_000_000)),
    ndc: OPERATOR_NDCS[i % OPERATOR_NDCS.length] ?? OPERATOR_NDCS[0],
  };
}

/** The identity of samplePrescription(i, ...) without building the request (bulk seeding). */
export function sampleIdentity(i: number): PrescriptionIdentity {
  const p = identityParts(i);
  return {
    patient_first_name: p.firstName,
    patient_last_name: p.lastName,
    patient_state: p.state,
    patient_dob: p.dob,
    erx_message_id: null,
    prescriber_npi: p.npi,
    written_date: p.writtenDate,
    drug_ndc: p.ndc,
  };
}

/**
 * A valid POST /prescriptions request for index i (external_id `${prefix}-${i}`).
 * The patient name is unique per i, so composite identities are unique across i.
 * `rejected` gives the prescriber the patient's first, middle and last names.
 */
export function samplePrescription(i: number, opts: { prefix?: string; rejected?: boolean } = {}): PrescriptionRequest {
  const p = identityParts(i);
  const patientName = { first_name: p.firstName, middle_name: 'Q', last_name: p.lastName };
  const prescriberName = opts.rejected
    ? patientName
    : { first_name: 'Sandy', middle_name: null, last_name: `Docfake${capitalized(p.token)}` };
  return {
    external_id: `${opts.prefix ?? 'rx'}-${i}`,
    written_date: p.writtenDate,
    number_of_refills: i % 4,
    substitutions: 0,
    sig_text: 'Take one tablet by mouth daily',
    patient: {
      ...patientName,
      dob: p.dob,
      gender: GENDERS[i % GENDERS.length] ?? 'U',
      primary_phone: '555-201-0100',
      email: null,
      address: {
        address1: `${100 + (i % 9_000)} Fixture Way`,
        address2: null,
        city: 'Testville',
        state: p.state,
        zip: String(10_000 + (i % 89_999)),
      },
    },
    medication: { name: 'Synthetic medication', ndc: p.ndc, quantity: '30', quantity_unit_code: 'C64933', days_supply: 30 },
    prescriber: { ...prescriberName, npi: p.npi, primary_phone: '555-201-0200', fax: null },
    pharmacy: { npi: OPERATOR_PHARMACY_NPI, ncpdpid: OPERATOR_PHARMACY_NCPDPID, primary_phone: '555-201-0300', fax: null },
    allergies: i % 3 === 0 ? null : [],
  };
}

/** The identity the sandbox derives for a prescription (erx_message_id null): what its events carry. */
export function identityOf(prescription: PrescriptionRequest): PrescriptionIdentity {
  return identityOfRequest(prescription);
}
