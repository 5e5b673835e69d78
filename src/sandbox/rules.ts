import type { KnownEventName } from '../intake/index.js';

/** Spec, Sandbox behaviour: events are published at 5-minute intervals after receipt. */
export const SANDBOX_STEP_MS = 5 * 60 * 1000;

/** Happy path, in order: accepted at +5 min, ordered +10, dispensed +15, delivered +20. */
export const HAPPY_PATH: readonly KnownEventName[] = ['accepted', 'ordered', 'dispensed', 'delivered'];
/** Rejection path: a single `rejected` at +5 min and nothing further. */
export const REJECTION_PATH: readonly KnownEventName[] = ['rejected'];

export interface PersonName {
  first_name?: string | null | undefined;
  middle_name?: string | null | undefined;
  last_name?: string | null | undefined;
}

// Missing and null middle names are the same "no middle name"; the rule is about
// names, so surrounding whitespace and letter case do not make them different.
function namePart(value: string | null | undefined): string {
  return (value ?? '').trim().toLowerCase();
}

/** Spec rule: identical patient and prescriber first, middle and last names take the rejection path. */
export function takesRejectionPath(patient: PersonName, prescriber: PersonName): boolean {
  return (
    namePart(patient.first_name) === namePart(prescriber.first_name) &&
    namePart(patient.middle_name) === namePart(prescriber.middle_name) &&
    namePart(patient.last_name) === namePart(prescriber.last_name)
  );
}

/** The event sequence the sandbox publishes for a prescription. */
export function sandboxPath(patient: PersonName, prescriber: PersonName): readonly KnownEventName[] {
  return takesRejectionPath(patient, prescriber) ? REJECTION_PATH : HAPPY_PATH;
}

/** When step `stepIndex` (0-based) of a prescription received at `receivedAtMs` falls due. */
export function stepDueAt(receivedAtMs: number, stepIndex: number): number {
  return receivedAtMs + (stepIndex + 1) * SANDBOX_STEP_MS;
}
