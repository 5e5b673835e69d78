import type { Logger } from '../../log/log.js';
import type { PreparedPage } from '../apply/prepare-page.js';
import type { LoopSleep } from '../../lib/loop-sleep.js';
import type { WorkerState } from '../state/worker-state.js';
import type { ApplyTimings, PageCounts, WorkerTotals } from '../state/worker-snapshot.js';
import type { DelayReason } from './next-delay.js';

// The shapes of one feed's poll loop: what it is handed (PollerDeps), what it reads and reports.

/** One GET /events page as the poller needs it. */
export interface FetchedPage {
  events: unknown[];
  meta: { iterator: string; done: boolean };
  /** the events already validated, when the fetch did it (then it overlaps the previous page's commit) */
  prepared?: PreparedPage;
}

/** What applying one page reported (the fields the loop and its reporters use). */
export interface AppliedPage extends PageCounts {
  version: number;
  timingsMs?: ApplyTimings;
  /** the newest occurred_at (ms) among the page's well-formed events, from its preparePage */
  newestOccurredAt?: number | undefined;
}

/** The stored read position the loop starts every pass from. */
export interface LoadedCheckpoint {
  iterator: string | null;
  version: number;
  updatedAt: Date | number;
}

/** Everything the loop needs, handed in so tests can fake each piece. */
export interface PollerDeps {
  /** `onSent`, when given, is called once the request is written to the socket (see fetchReportsSent) */
  fetchPage(request: { iterator: string | null; onSent?: () => void }, signal: AbortSignal): Promise<FetchedPage>;
  /**
   * fetchPage calls `onSent` when its request leaves: the loop then starts a page's validation and
   * statement only once the next page's request is on the wire, not one event-loop turn after asking
   * for it (a request takes several turns to be written). Without it the loop yields one turn.
   */
  fetchReportsSent?: boolean;
  /**
   * Validates a fetched page's events (preparePage) as the page arrives, when the loop is busy applying
   * the previous one. A page the loop was waiting for is passed on unprepared instead: the next fetch is
   * sent first and applyPage validates it, so on a slow network validation hides behind that fetch.
   */
  preparePage?(events: unknown[]): PreparedPage;
  /** one transaction; throws CheckpointConflictError when expectedVersion is stale */
  applyPage(input: { expectedVersion: number; nextIterator: string; events: unknown[]; prepared?: PreparedPage }): Promise<AppliedPage>;
  loadCheckpoint(): Promise<LoadedCheckpoint>;
  clock: { now(): number };
  sleep: LoopSleep;
  /**
   * The wait before the next pass. A caught-up wait is measured from `pollStartedAt`, the start of the
   * last poll (or of the pass, when it sent none): the loop takes the time since then off it.
   */
  nextDelay(reason: DelayReason, pollStartedAt?: number): number;
  state: WorkerState;
  log: Logger;
  /** drain mode gives up (rejects) after this many consecutive failures; the daemon never does */
  drainMaxFailures?: number;
  /** the feed's name, for the cursor-problem reason (default 'default') */
  feed?: string;
  /** FEED_RETENTION_MS: a checkpoint idle this long is a suspected gap (see suspectsGap); undefined = no check */
  retentionMs?: number;
  /**
   * A caught-up pass reuses the position this loop last loaded or committed when that is younger than
   * this (default 0: every pass reads the checkpoint). Safe at any value: a position moved by a reset
   * or another worker fails the next page's compare-and-set, which forces a reload; the interval only
   * bounds how long a reset made while the feed is quiet waits to be noticed.
   */
  checkpointReloadMs?: number;
  /**
   * Stamps the checkpoint's updated_at without moving it (nothing when its version moved). An empty poll
   * writes nothing else, so with retentionMs set a quiet feed's checkpoint is stamped every
   * retentionMs / 20 (checkpointNeedsTouch): suspectsGap must not read a caught-up worker as nobody polling.
   */
  touchCheckpoint?(expectedVersion: number): Promise<void>;
  /**
   * Asked when a reload finds the checkpoint at a version this loop neither read nor committed: a reset or a
   * resync, or another worker that took the feed while this one was frozen (SIGSTOP, a VM pause) past the
   * lease TTL. The loop acts on a position someone else wrote only once this says the lease is still held.
   * False means the caller is stopping this loop (the term's leader loop steps down); the pass waits for that.
   * None: single-process use, nobody to yield to.
   */
  confirmLeadership?(): Promise<boolean>;
  /** the feed's latest checkpoint reset, to tell a mistyped reset from an expired cursor (see resetToBlame) */
  latestReset?(): Promise<{ from: string | null; to: string | null; by: string; at: Date } | null>;
  /**
   * Called each time a pass ends caught up (the operator said done), with the position's version;
   * true ends the loop (run and drain resolve). A draining source retires here (feed-sources.ts).
   */
  afterCaughtUp?(version: number): Promise<boolean>;
  /**
   * This loop reads a second source of the feed (one being drained after an API version migration):
   * its counts go to the feed's totals, but the position the state reports stays the feed's checkpoint.
   */
  secondarySource?: boolean;
}

/** What SyncWorker runs for one term as leader: a Poller, or one per source of the feed (SourcesPoller). */
export interface PollLoop {
  run(): Promise<void>;
  drain(): Promise<DrainSummary>;
  stop(): Promise<void>;
}

/** What a drain did, for `run --once`. */
export interface DrainSummary extends WorkerTotals {
  /** false when stop() ended the drain before the operator said done */
  drained: boolean;
  elapsedMs: number;
  eventsPerSecond: number;
}

/** The position as last read or committed by the loop, and when. */
export interface KnownPosition {
  iterator: string | null;
  version: number;
  at: number;
  updatedAtMs: number;
}

/** What one feed's loop carries from pass to pass. */
export interface PassMemory {
  /** the position as last read or committed by this loop; undefined forces a read */
  known: KnownPosition | undefined;
  /** the checkpoint version this loop last read or committed (kept across passes): a reload that finds another was moved by someone else */
  lastVersion: number | undefined;
  /** set while stopped on a cursor problem: the checkpoint version it was found at */
  heldAtVersion: number | undefined;
  /** clock.now() when the last page fetch of a pass started (the pass's start when it sent none): caught-up polls are paced start to start */
  lastFetchStartedAt: number;
}
