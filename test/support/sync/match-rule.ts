/** The match-relevant part of a local prescription. */
export interface LocalIdentity {
  id: number;
  erx: string | null;
  key: string;
}

/** The match-relevant part of an event: normalised erx_message_id and identityKey(). */
export interface EventIdentity {
  erx: string | null;
  key: string;
}

export type MatchOutcome = { kind: 'matched'; id: number } | { kind: 'unmatched' } | { kind: 'ambiguous'; ids: number[] };

/** One candidate applies; none is unmatched; several are ambiguous and apply to none. */
export function decideMatch(candidateIds: readonly number[]): MatchOutcome {
  const ids = [...new Set(candidateIds)].sort((a, b) => a - b);
  if (ids.length === 0) return { kind: 'unmatched' };
  if (ids.length === 1) return { kind: 'matched', id: ids[0] as number };
  return { kind: 'ambiguous', ids };
}

/**
 * The match rule (mirrored by matchCandidatesSql): locals carrying the event's
 * erx_message_id decide alone; otherwise the identity key, excluding locals whose
 * erx_message_id differs from the event's.
 */
export function matchCandidates(event: EventIdentity, candidates: readonly LocalIdentity[]): number[] {
  if (event.erx !== null) {
    const byErx = candidates.filter((c) => c.erx === event.erx);
    if (byErx.length > 0) return byErx.map((c) => c.id);
  }
  return candidates.filter((c) => c.key === event.key && (event.erx === null || c.erx === null)).map((c) => c.id);
}

/** Matches one event against local prescriptions. */
export function matchEvent(event: EventIdentity, candidates: readonly LocalIdentity[]): MatchOutcome {
  return decideMatch(matchCandidates(event, candidates));
}
