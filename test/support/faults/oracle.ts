import type { FeedEntry } from './feed-reader.js';
import { OracleScopeError } from './oracle-scope-error.js';
import { identityOf, identityText, type LocalPrescription } from './local-prescriptions.js';
import type { PrescriptionState, StoreSnapshot } from './store.js';

/** Lifecycle rank per the worker's rules: forward only; rejected is terminal. */
const RANK: Record<string, number> = { accepted: 1, ordered: 2, dispensed: 3, delivered: 4, rejected: 5 };

/**
 * The state a correct worker reaches after draining `feed` with `prescriptions`
 * registered, computed from the feed itself (no worker involved). Scope: every
 * entry well formed and matching exactly one local prescription, each
 * prescription either rejected or on the accepted..delivered path.
 */
export function expectedFromFeed(feed: readonly FeedEntry[], prescriptions: readonly LocalPrescription[]): StoreSnapshot {
  const byIdentity = new Map(prescriptions.map((p) => [identityText(p.prescription_identity), p.external_id]));
  const state: Record<string, PrescriptionState> = {};
  const ranks = new Map<string, number>();
  const names = new Map<string, Set<string>>();
  for (const p of prescriptions) {
    state[p.external_id] = { status: null, statusOccurredAt: null, statusEventId: null };
    names.set(p.external_id, new Set());
  }
  const events: StoreSnapshot['events'] = {};
  for (const entry of feed) {
    const identity = identityOf(entry);
    const raw = entry.raw as { name?: unknown; occurred_at?: unknown };
    if (!entry.id || !identity || typeof raw.name !== 'string' || typeof raw.occurred_at !== 'string') {
      throw new OracleScopeError(`feed entry ${entry.text.slice(0, 120)} is malformed`);
    }
    const externalId = byIdentity.get(identityText(identity));
    if (externalId === undefined) throw new OracleScopeError(`event ${entry.id} matches no local prescription`);
    // the first sighting of an id is the one applied; later copies are duplicates
    if (events[entry.id]) continue;
    events[entry.id] = { name: raw.name, externalId };
    names.get(externalId)?.add(raw.name);
    const rank = RANK[raw.name];
    const current = ranks.get(externalId) ?? 0;
    if (rank === undefined || rank <= current || current === RANK.rejected) continue;
    ranks.set(externalId, rank);
    state[externalId] = {
      status: raw.name,
      statusOccurredAt: new Date(raw.occurred_at).toISOString(),
      statusEventId: entry.id,
    };
  }
  for (const [externalId, seen] of names) {
    if (seen.has('rejected') && seen.size > 1) {
      throw new OracleScopeError(`${externalId} is both rejected and on the dispensing path; the rules leave that open`);
    }
  }
  return { prescriptions: state, events, quarantine: {} };
}
