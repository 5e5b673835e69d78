import type { Db } from '../../db/connection.js';
import { readStoredPosition } from './resync-precondition.js';
import { loadCandidates } from './resync.js';

/** What `resync` would do, read without writing anything or calling the operator (`--dry-run`). */
export interface ResyncPlan {
  feed: string;
  /** the position resync would give up (null: the beginning) */
  from: string | null;
  /** the external_ids that would get a new subscription with backfill, in order */
  resubscribe: string[];
  /** how many earlier subscriptions would be cancelled at most (the recorded ones and those events came under) */
  cancel: number;
  /** prescriptions delivered or rejected: left as they are */
  terminal: number;
}

/** The dry run of resync: the same candidate query, no write, no request. Identifiers and counts only. */
export async function planResync(db: Db, feed: string): Promise<ResyncPlan> {
  const { iterator } = await readStoredPosition(db, feed);
  const { candidates, terminal } = await loadCandidates(db, feed);
  return {
    feed,
    from: iterator,
    resubscribe: candidates.map((c) => c.external_id),
    cancel: candidates.reduce((sum, c) => sum + c.old_subscriptions.length, 0),
    terminal,
  };
}
