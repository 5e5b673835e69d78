import { namesOf } from '../../db/store-names.js';
import { performance } from 'node:perf_hooks';
import type { Db } from '../../db/connection.js';
import { applyPageSql, matchLockSharedSql, type ApplyPageRow } from './page-statement.js';
import { CheckpointConflictError } from './errors/checkpoint-conflict-error.js';
import { asLockWaitTimeout } from '../../db/lock-wait.js';
import { sendStatusWakeup } from '../../db/status-wakeup.js';
import type { ApplyTimings } from '../state/worker-snapshot.js';
import { inPipelinedTransaction } from '../../db/page-transaction.js';
import { preparePage, type PreparedPage } from './prepare-page.js';
import { applyPageInParts } from './apply-page-in-parts.js';
import { isDataError } from './data-error.js';

export interface ApplyPageInput {
  feed: string;
  /** checkpoint version this worker read; the page applies only if it is still current */
  expectedVersion: number;
  /** where the feed continues after this page */
  nextIterator: string;
  /** the page's events exactly as received */
  events: unknown[];
  /**
   * preparePage(events), when the caller already ran it: validating page N+1 while
   * page N's statements are in flight takes validation off the critical path
   */
  prepared?: PreparedPage;
  receivedAt?: Date;
  /** the base URL the page was read from (see ApplyPageParams.readFrom) */
  readFrom?: string | undefined;
  /** read from a draining source: its own position moves, not the feed's checkpoint */
  draining?: boolean;
  /** told when the page starts waiting for the match lock and when it stops (granted or not): /readyz shows a long wait */
  matchLockWait?: { started(): void; ended(): void } | undefined;
}

export interface ApplyResult {
  /** the checkpoint version after this page */
  version: number;
  received: number;
  inserted: number;
  /** well-formed events already in history or repeated in the page: nothing re-applied */
  duplicates: number;
  statusChanges: number;
  matched: number;
  quarantined: { malformed: number; unmatched: number; ambiguous: number; unsupported_version: number };
  /**
   * events Postgres refused although they passed the bounds, quarantined by fingerprint (counted in
   * quarantined.malformed too): the page was applied in parts (apply-page-in-parts.ts). Absent: none
   */
  refusedByPostgres?: { count: number; sqlStates: string[] };
  /** the newest occurred_at (ms) among the page's well-formed events; absent when it had none */
  newestOccurredAt?: number | undefined;
  /**
   * validate is 0 when the page came prepared; write is the one page statement: checkpoint
   * compare-and-set, matching, events, statuses and quarantine (after the match lock, pipelined)
   */
  timingsMs: ApplyTimings;
}

/**
 * Applies one page in ONE transaction of one statement (after the match lock), sent with its BEGIN
 * and COMMIT in one round trip: the
 * checkpoint compare-and-set (throws CheckpointConflictError and applies nothing when
 * the version moved), then events, matches, statuses, quarantine and checkpoint totals.
 */
export async function applyPage(db: Db, input: ApplyPageInput): Promise<ApplyResult> {
  const receivedAt = (input.receivedAt ?? new Date()).toISOString();
  const t0 = performance.now();
  const page = input.prepared ?? preparePage(input.events);
  const names = namesOf(db);
  const base = {
    feed: input.feed,
    expectedVersion: input.expectedVersion,
    nextIterator: input.nextIterator,
    receivedAt,
    readFrom: input.readFrom,
    ...(input.draining ? { draining: true } : {}),
  };
  const statement = applyPageSql(names, {
    ...base,
    eventsJson: page.rowsJson.events,
    malformedJson: page.rowsJson.malformed,
    malformedCount: page.malformed.length,
  });
  const t1 = performance.now();

  // BEGIN, the match lock (held before the page statement takes its snapshot), the page statement and
  // COMMIT in one flight. A moved checkpoint makes the statement write nothing (every write reads the
  // compare-and-set), so committing that empty transaction is as good as rolling it back.
  let rows: Array<Array<Record<string, unknown>>>;
  let statementsDoneAt: number;
  try {
    ({ rows, statementsDoneAt } = await waitingForTheMatchLock(input.feed, input.matchLockWait, (granted) =>
      inPipelinedTransaction(db, [matchLockSharedSql(names, input.feed), statement], undefined, granted),
    ));
  } catch (error) {
    // Postgres refused the page for its data: the same statement would fail forever, so apply it in parts
    if (!isDataError(error)) throw error;
    return applyRefusedPage(db, input, page, base, t0, t1);
  }
  const committed = performance.now();
  const row = rows[1]?.[0] as ApplyPageRow | undefined;
  if (!row || row.version === null) throw new CheckpointConflictError(input.feed, input.expectedVersion);
  // after the commit, outside it: a full notification queue never fails a page (issue 33 §2)
  if (row.status_changes > 0) void sendStatusWakeup(db);

  return {
    version: Number(row.version),
    received: input.events.length,
    inserted: row.inserted,
    duplicates: page.events.length - row.inserted + page.duplicatesInPage,
    statusChanges: row.status_changes,
    matched: row.matched,
    quarantined: {
      malformed: page.malformed.length,
      unmatched: row.unmatched,
      ambiguous: row.ambiguous,
      unsupported_version: row.unsupported_version,
    },
    newestOccurredAt: page.newestOccurredAt,
    timingsMs: {
      prepare: page.prepareMs,
      validate: input.prepared ? 0 : t1 - t0,
      write: statementsDoneAt - t1,
      commit: committed - statementsDoneAt,
    },
  };
}

/** applyPage's result for a page Postgres refused whole: applied again in parts (apply-page-in-parts.ts). */
async function applyRefusedPage(
  db: Db,
  input: ApplyPageInput,
  page: PreparedPage,
  base: Parameters<typeof applyPageInParts>[2],
  t0: number,
  t1: number,
): Promise<ApplyResult> {
  const { row, totals } = await applyPageInParts(db, namesOf(db), base, page);
  const done = performance.now();
  return {
    version: Number(row.version),
    received: input.events.length,
    inserted: totals.inserted,
    duplicates: page.events.length - totals.inserted - totals.refusedEvents + page.duplicatesInPage,
    statusChanges: totals.statusChanges,
    matched: totals.matched,
    quarantined: {
      malformed: totals.malformed + totals.refused,
      unmatched: totals.unmatched,
      ambiguous: totals.ambiguous,
      unsupported_version: totals.unsupportedVersion,
    },
    refusedByPostgres: { count: totals.refused, sqlStates: totals.states },
    newestOccurredAt: page.newestOccurredAt,
    timingsMs: { prepare: page.prepareMs, validate: input.prepared ? 0 : t1 - t0, write: done - t1, commit: 0 },
  };
}

/**
 * Runs the page with the wait for the match lock reported (started now, ended at the lock's answer)
 * and a lock_timeout (SQLSTATE 55P03: the match lock, or the feed's change clock at COMMIT) turned
 * into a LockWaitTimeoutError naming the lock and its holder as the server read them.
 */
async function waitingForTheMatchLock<T>(
  feed: string,
  wait: ApplyPageInput['matchLockWait'],
  run: (granted: () => void) => Promise<T>,
): Promise<T> {
  let waiting = wait !== undefined;
  const ended = () => {
    if (!waiting) return;
    waiting = false;
    wait?.ended();
  };
  wait?.started();
  try {
    return await run(ended);
  } catch (error) {
    // the match lock, or at COMMIT the feed's change clock: the server names the lock and its holder
    const timedOut = asLockWaitTimeout(error, `the page of feed ${feed}`);
    if (timedOut) throw timedOut;
    throw error;
  } finally {
    ended();
  }
}
