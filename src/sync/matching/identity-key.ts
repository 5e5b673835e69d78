/**
 * Separates the fields of an identity key. A unit separator cannot be typed into
 * a name or date, so `ab|c` and `a|bc` can never collide.
 */
export const KEY_SEPARATOR = '\u001f';

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
// the calendar date as written; the time part (and any offset) is not part of a dob or written date
const ISO_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?$/i;
const COMPACT_DATE = /^(\d{4})(\d{2})(\d{2})$/;
const US_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/;

const isLeapYear = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/**
 * The day if it exists in the proleptic Gregorian calendar, year 0000 included (a leap year).
 * Arithmetic, not Date: Date.UTC reads years 0-99 as 1900-1999, and 1900 is no leap year, so
 * 0000-02-29 came out as no day at all. The SQL API's _calendar_date() is the same arithmetic.
 */
function calendarDate(year: number, month: number, day: number): string | null {
  const days = month === 2 ? (isLeapYear(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  if (month < 1 || month > 12 || day < 1 || day > days) return null;
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/**
 * YYYY-MM-DD from YYYY-MM-DD, an ISO timestamp, YYYYMMDD, MM/DD/YYYY or M/D/YYYY;
 * null when the format is not one of these or the day does not exist.
 */
export function normaliseDate(value: string): string | null {
  const text = value.trim();
  const ymd = ISO_DATE.exec(text) ?? ISO_TIMESTAMP.exec(text) ?? COMPACT_DATE.exec(text);
  if (ymd) return calendarDate(Number(ymd[1]), Number(ymd[2]), Number(ymd[3]));
  const us = US_DATE.exec(text);
  if (us) return calendarDate(Number(us[3]), Number(us[1]), Number(us[2]));
  return null;
}

/** An eRx message id, trimmed; empty or absent means none. */
export function normaliseErx(value: string | null | undefined): string | null {
  const trimmed = value?.trim() ?? '';
  return trimmed === '' ? null : trimmed;
}

const name = (v: string) => v.normalize('NFC').trim().toLowerCase();
const date = (v: string) => normaliseDate(v) ?? v.trim().toLowerCase();

/** The PrescriptionIdentity fields the composite key is built from. */
export interface IdentityKeyFields {
  patient_first_name: string;
  patient_last_name: string;
  patient_state: string;
  patient_dob: string;
  prescriber_npi: string;
  written_date: string;
  drug_ndc: string;
}

/** The composite match key: the identity fields normalised, erx_message_id excluded. */
export function identityKey(identity: IdentityKeyFields): string {
  return [
    name(identity.patient_first_name),
    name(identity.patient_last_name),
    identity.patient_state.trim().toUpperCase(),
    date(identity.patient_dob),
    identity.prescriber_npi.trim(),
    date(identity.written_date),
    identity.drug_ndc.replace(/[-\s]/g, ''),
  ].join(KEY_SEPARATOR);
}
