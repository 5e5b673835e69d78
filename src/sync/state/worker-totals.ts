import type { AppliedPageRecord, QuarantineCounts, WorkerTotals } from './worker-snapshot.js';

/** Totals of zero, the start of every count. */
export function emptyTotals(): WorkerTotals {
  return {
    pages: 0,
    received: 0,
    inserted: 0,
    duplicates: 0,
    statusChanges: 0,
    matched: 0,
    quarantined: { malformed: 0, unmatched: 0, ambiguous: 0, unsupported_version: 0 },
    conflicts: 0,
    upstreamRetries: 0,
  };
}

const TOTAL_COUNTS = ['pages', 'received', 'inserted', 'duplicates', 'statusChanges', 'matched', 'conflicts', 'upstreamRetries'] as const;
const QUARANTINE_COUNTS = ['malformed', 'unmatched', 'ambiguous', 'unsupported_version'] as const satisfies ReadonlyArray<
  keyof QuarantineCounts
>;

/** `a + sign × b`, count by count: a drain's share of the totals (sign -1), or several drains summed. */
export function combineTotals(a: WorkerTotals, b: WorkerTotals, sign: 1 | -1 = 1): WorkerTotals {
  const result = emptyTotals();
  for (const key of TOTAL_COUNTS) result[key] = a[key] + sign * b[key];
  for (const reason of QUARANTINE_COUNTS) result.quarantined[reason] = a.quarantined[reason] + sign * b.quarantined[reason];
  return result;
}

/** Adds one applied page to the running totals (in place). */
export function addPage(totals: WorkerTotals, page: AppliedPageRecord): void {
  totals.pages += 1;
  totals.received += page.received;
  totals.inserted += page.inserted;
  totals.duplicates += page.duplicates;
  totals.statusChanges += page.statusChanges;
  totals.matched += page.matched;
  totals.quarantined.malformed += page.quarantined.malformed;
  totals.quarantined.unmatched += page.quarantined.unmatched;
  totals.quarantined.ambiguous += page.quarantined.ambiguous;
  totals.quarantined.unsupported_version += page.quarantined.unsupported_version;
}
