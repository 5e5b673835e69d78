import { z } from 'zod';

/** The API version this build speaks; also the last segment of every base path. */
export const API_VERSION = '2024-12-10';
export const API_BASE_PATH = `/intake_api/${API_VERSION}`;

/** NDCs the operator dispenses (spec: Medication.ndc enum). */
export const OPERATOR_NDCS = ['00002015204', '00002024304', '00002121404', '00002134004', '00002142304', '00002200204'] as const;

/** The one operator-managed pharmacy (spec: Pharmacy.npi / Pharmacy.ncpdpid enums). */
export const OPERATOR_PHARMACY_NPI = '1689411712';
export const OPERATOR_PHARMACY_NCPDPID = '3692539';

export const US_STATES = [
  'AL',
  'AK',
  'AZ',
  'AR',
  'CA',
  'CO',
  'CT',
  'DE',
  'DC',
  'FL',
  'GA',
  'HI',
  'ID',
  'IL',
  'IN',
  'IA',
  'KS',
  'KY',
  'LA',
  'ME',
  'MD',
  'MA',
  'MI',
  'MN',
  'MS',
  'MO',
  'MT',
  'NE',
  'NV',
  'NH',
  'NJ',
  'NM',
  'NY',
  'NC',
  'ND',
  'OH',
  'OK',
  'OR',
  'PA',
  'RI',
  'SC',
  'SD',
  'TN',
  'TX',
  'UT',
  'VT',
  'VA',
  'WA',
  'WV',
  'WI',
  'WY',
] as const;

/**
 * NPI check digit: Luhn over the 9 leading digits prefixed with the card issuer
 * identifier 80840 (CMS "NPI check digit" rule). Pure, so it is table-tested.
 */
export function isValidNpi(npi: string): boolean {
  if (!/^\d{10}$/.test(npi)) return false;
  const digits = `80840${npi}`;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * A US (NANP) phone number: 10 digits, optionally prefixed by +1/1, with common
 * separators. Area code and exchange may not start with 0 or 1.
 */
export function isValidUsPhone(phone: string): boolean {
  if (!/^[+\d\s().-]+$/.test(phone)) return false;
  let digits = phone.replace(/\D/g, '');
  if (phone.trim().startsWith('+') && !digits.startsWith('1')) return false;
  if (digits.length === 11 && digits.startsWith('1')) digits = digits.slice(1);
  if (digits.length !== 10) return false;
  return /^[2-9]\d{2}[2-9]\d{6}$/.test(digits);
}

/** YYYY-MM-DD that is also a real calendar day (rejects 2024-02-30). */
export function isCalendarDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

export const npi = z.string().refine(isValidNpi, { message: 'must be a 10-digit NPI with a valid check digit' });
export const usPhone = z.string().refine(isValidUsPhone, { message: 'must be a US phone number (10 digits)' });
export const isoDate = z.string().refine(isCalendarDate, { message: 'must be a date in YYYY-MM-DD format' });
export const usState = z.enum(US_STATES, { message: 'must be a two-letter US state abbreviation (50 states and DC)' });
export const zip5 = z.string().regex(/^\d{5}$/, { message: 'must be five digits' });
export const ndc = z.enum(OPERATOR_NDCS, { message: 'must be one of the NDCs the operator dispenses' });
export const nonEmpty = z.string().trim().min(1, { message: 'must not be empty' });

export const address = z.object({
  address1: nonEmpty,
  address2: z.string().nullish(),
  city: nonEmpty,
  state: usState,
  zip: zip5,
});
export type Address = z.infer<typeof address>;
