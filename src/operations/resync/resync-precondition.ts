import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import { namesOf } from '../../db/store-names.js';
import type { IntakeClient } from '../../intake/client.js';
import { classifyEventsFailure, type CursorProblemKind, eventsFailureFacts, suspectsGap } from '../../sync/state/cursor-problem.js';

/** The feed's stored position, read without creating a checkpoint row (a dry run writes nothing). */
export interface StoredPosition {
  iterator: string | null;
  updatedAtMs: number | null;
}

export async function readStoredPosition(db: Db, feed: string): Promise<StoredPosition> {
  const [row] = await queryRows<{ iterator: string | null; updated_at: unknown }>(
    db,
    sql`select iterator, updated_at from ${namesOf(db).feedCheckpoints} where feed = ${feed}::text`,
  );
  return row
    ? { iterator: row.iterator, updatedAtMs: new Date(row.updated_at as string | Date).getTime() }
    : { iterator: null, updatedAtMs: null };
}

/** Whether the feed is stopped at a position the operator will not (or may not) serve, and how that was found. */
export interface CursorCheck {
  problem: CursorProblemKind | null;
  /** what was found, for the refusal message and the dry run: PHI-free */
  finding: string;
}

/**
 * Asks the operator whether the stored position is still served, exactly as the worker would find
 * it stopped: GET /events at the stored iterator with limit=1 (reading does not consume the feed or
 * change anything at the operator; nothing read is applied), classified like the worker classifies a
 * failed poll (classifyEventsFailure), and the retention check (suspectsGap) on the checkpoint's
 * age. Another failure (the operator down) is thrown: then nobody can tell.
 */
export async function checkCursor(options: {
  position: StoredPosition;
  client: Pick<IntakeClient, 'listEvents'>;
  retentionMs: number | undefined;
  now: number;
}): Promise<CursorCheck> {
  const { position } = options;
  if (position.iterator === null)
    return { problem: null, finding: 'the feed reads from the beginning: there is no stored position to expire' };
  if (
    position.updatedAtMs !== null &&
    suspectsGap({ iterator: position.iterator, updatedAtMs: position.updatedAtMs }, options.now, options.retentionMs)
  ) {
    return { problem: 'gap-suspected', finding: 'no page was committed for longer than FEED_RETENTION_MS' };
  }
  try {
    await options.client.listEvents({ iterator: position.iterator, limit: 1 });
  } catch (error) {
    const problem = classifyEventsFailure(eventsFailureFacts(error, true));
    if (problem === 'expired') return { problem, finding: 'the operator says the stored iterator expired' };
    if (problem === 'refused') return { problem, finding: 'the operator refuses the stored iterator (400)' };
    throw error;
  }
  return { problem: null, finding: 'the operator still serves the stored position' };
}
