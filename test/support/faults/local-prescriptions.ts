import type { FeedEntry } from './feed-reader.js';

/** The PrescriptionIdentity fields, in the spec's order. */
const IDENTITY_FIELDS = [
  'patient_first_name',
  'patient_last_name',
  'patient_state',
  'patient_dob',
  'erx_message_id',
  'prescriber_npi',
  'written_date',
  'drug_ndc',
] as const;

const REQUIRED_FIELDS = IDENTITY_FIELDS.filter((field) => field !== 'erx_message_id');

export type Identity = Partial<Record<(typeof IDENTITY_FIELDS)[number], string | null>>;

/** A local prescription as `prescriptions import` takes it (one NDJSON line). */
export interface LocalPrescription {
  external_id: string;
  prescription_identity: Identity;
}

/** The identity carried by a feed entry, when it has an object one. */
export function identityOf(entry: FeedEntry): Identity | undefined {
  const raw = entry.raw;
  if (!raw || typeof raw !== 'object' || !('prescription_identity' in raw)) return undefined;
  const identity = raw.prescription_identity;
  if (!identity || typeof identity !== 'object') return undefined;
  return identity as Identity;
}

/** Exact text of an identity's fields: the harness matches events to prescriptions by it. */
export function identityText(identity: Identity): string {
  return JSON.stringify(IDENTITY_FIELDS.map((field) => identity[field] ?? null));
}

/**
 * One local prescription per distinct identity in the feed, numbered in order
 * of first appearance: the vendor-side records the worker must match events to.
 */
export function prescriptionsForFeed(feed: readonly FeedEntry[], prefix: string): LocalPrescription[] {
  const seen = new Map<string, LocalPrescription>();
  for (const entry of feed) {
    const identity = identityOf(entry);
    // only identities a well-formed event carries; a mangled one is not a prescription
    if (!entry.id || !identity || !REQUIRED_FIELDS.every((field) => typeof identity[field] === 'string')) continue;
    const key = identityText(identity);
    if (seen.has(key)) continue;
    const prescription_identity: Identity = {};
    for (const field of IDENTITY_FIELDS) if (identity[field] !== undefined) prescription_identity[field] = identity[field];
    seen.set(key, { external_id: `${prefix}-${String(seen.size + 1).padStart(6, '0')}`, prescription_identity });
  }
  return [...seen.values()];
}

/** NDJSON text for `intake-sync prescriptions import`. */
export function toImportFile(prescriptions: readonly LocalPrescription[]): string {
  return `${prescriptions.map((p) => JSON.stringify(p)).join('\n')}\n`;
}
