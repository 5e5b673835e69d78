import type { KnownEventName } from '../../intake/event.js';

/**
 * Lifecycle rank per event name. A status only ever moves to a higher rank, so
 * `rejected` (highest) is terminal and late or replayed events cannot regress it.
 */
export const STATUS_RANKS: Readonly<Record<KnownEventName, number>> = {
  accepted: 1,
  ordered: 2,
  dispensed: 3,
  delivered: 4,
  rejected: 5,
};

/** Rank of an event name; null for a name outside the five the spec lists. */
export function statusRank(name: string): number | null {
  return Object.hasOwn(STATUS_RANKS, name) ? STATUS_RANKS[name as KnownEventName] : null;
}

/** True when an event of `eventRank` moves a prescription currently at `currentRank` (0 = no status yet). */
export function shouldAdvance(currentRank: number, eventRank: number | null): boolean {
  return eventRank !== null && eventRank > currentRank;
}
