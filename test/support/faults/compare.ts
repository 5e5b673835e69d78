import type { StoreSnapshot } from './store.js';

/** How an actual final state departs from the expected one. */
export interface Divergence {
  /** expected rows that are missing: events not stored, quarantine entries not kept */
  lost: string[];
  /** rows that should not exist: events or quarantine entries beyond the expected ones */
  duplicated: string[];
  /** rows present on both sides with different content (statuses, links, reasons) */
  changed: string[];
}

/** Compares two final states row by row; every difference is named. */
export function compareSnapshots(expected: StoreSnapshot, actual: StoreSnapshot): Divergence {
  const divergence: Divergence = { lost: [], duplicated: [], changed: [] };
  const tables = ['prescriptions', 'events', 'quarantine'] as const;
  for (const table of tables) {
    const want: Record<string, unknown> = expected[table];
    const got: Record<string, unknown> = actual[table];
    for (const [key, value] of Object.entries(want)) {
      if (!(key in got)) divergence.lost.push(`${table}:${key}`);
      else if (JSON.stringify(got[key]) !== JSON.stringify(value)) {
        divergence.changed.push(`${table}:${key} expected ${JSON.stringify(value)} got ${JSON.stringify(got[key])}`);
      }
    }
    for (const key of Object.keys(got)) if (!(key in want)) divergence.duplicated.push(`${table}:${key}`);
  }
  return divergence;
}

/** True when nothing was lost, duplicated or changed. */
export function isExact(divergence: Divergence): boolean {
  return divergence.lost.length + divergence.duplicated.length + divergence.changed.length === 0;
}

/** A short human summary for an assertion message (first few rows of each kind). */
export function describeDivergence(divergence: Divergence): string {
  const head = (rows: string[]) => `${rows.length}${rows.length ? ` (${rows.slice(0, 5).join('; ')})` : ''}`;
  return `lost ${head(divergence.lost)}, duplicated ${head(divergence.duplicated)}, changed ${head(divergence.changed)}`;
}
