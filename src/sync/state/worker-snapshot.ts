import type { CursorProblemKind, ResetHint } from './cursor-problem.js';

// What the worker's state holds and shows: the snapshot health, metrics and status read, the page
// counts, and the listener hooks. WorkerState (worker-state.ts) writes it; worker-totals.ts adds it up.

/** One recorded source of a feed, as health and metrics show it (a version and a state: nothing else). */
export interface FeedSourceSummary {
  apiVersion: string;
  state: 'current' | 'draining' | 'retired';
}

/** Where this process stands with respect to the feed lease. */
export type WorkerRole = 'starting' | 'standby' | 'leader' | 'stopped';

/** Which side a failure came from: the operator's API or our own database. */
export type FailureSource = 'upstream' | 'database';

/** Why a request to the operator failed, as a metric label (see failure-reason.ts). */
export const UPSTREAM_FAILURE_REASONS = [
  'unauthorized',
  'rate_limited',
  'server_error',
  'timeout',
  'network',
  'bad_request',
  'bad_response',
  'other',
] as const;
export type UpstreamFailureReason = (typeof UPSTREAM_FAILURE_REASONS)[number];

export interface QuarantineCounts {
  malformed: number;
  unmatched: number;
  ambiguous: number;
  /** stored but not applied: an api_version this build does not read */
  unsupported_version: number;
}

/** What applying pages did to the store: per page, and summed in the totals. */
export interface PageCounts {
  received: number;
  inserted: number;
  duplicates: number;
  statusChanges: number;
  matched: number;
  quarantined: QuarantineCounts;
}

/** Where a page's apply time went, in ms (validate is 0 when the page came validated by its prefetch). */
export interface ApplyTimings {
  /** parsing and validating the page's events and serialising its rows, wherever it ran (see validate) */
  prepare: number;
  /** the part of prepare on the critical path: 0 when it ran in the prefetch, during the previous commit */
  validate: number;
  /** the page statement: compare-and-set, match, events, statuses, quarantine */
  write: number;
  commit: number;
}

/** What one applied page did, as the metrics and progress reporters see it. */
export interface AppliedPageRecord extends PageCounts {
  timingsMs?: ApplyTimings;
  /** from the start of the page's fetch to its commit */
  durationMs: number;
  done: boolean;
  /** the newest occurred_at (ms) among the page's well-formed events; absent when it had none */
  newestOccurredAt?: number;
}

/** Running totals since this process started. */
export interface WorkerTotals extends PageCounts {
  pages: number;
  conflicts: number;
  upstreamRetries: number;
}

/** A PHI-free copy of everything health, metrics and progress report. */
export interface WorkerSnapshot {
  role: WorkerRole;
  /** false only once the loop has died of an unexpected error (healthz 503) */
  loopAlive: boolean;
  loopDeathReason: string | null;
  /** set when consuming stopped for good (401): readyz 503 with this reason */
  fatalReason: string | null;
  /** set while the feed is stopped at a position the operator will not (or may not) serve: cleared when resync or a reset moves it */
  cursorProblem: { feed: string; kind: CursorProblemKind; since: number; at?: string | null; reset?: ResetHint | null } | null;
  leaderSince: number | null;
  lastSuccessAt: number | null;
  /** when the last poll ended, successful or not: the loop's heartbeat */
  lastPollAt: number | null;
  /** the newest occurred_at (ms) of any event applied since this process started */
  newestOccurredAt: number | null;
  consecutiveFailures: number;
  lastFailure: { source: FailureSource; summary: string; at: number } | null;
  /** since when the page in flight waits for the match lock (a registration or rematch holds it); null when not waiting */
  matchLockWaitSince: number | null;
  /** the pages failing in a row on a lock wait (lock_timeout), with the lock and holder the server named; null after a success */
  lockBlocked: LockBlocked | null;
  noProgressStreak: number;
  /** the last applied page said done=false: a backlog is being drained */
  backlog: boolean;
  checkpoint: { iterator: string | null; version: number; updatedAt: number } | null;
  /** the feed's recorded operator sources (API version migration) as last loaded; empty: none recorded */
  sources: FeedSourceSummary[];
  totals: WorkerTotals;
}

/** A poll that brought nothing new, as pollSucceeded reports it. */
export interface EmptyPoll {
  done: boolean;
  noProgress: boolean;
  /** from the request's start to its answer, when the poller measured it */
  durationMs?: number;
}

/** Hooks for reporters that need each event, not just the latest snapshot. */
/** /readyz's line for a feed stopped by a fatal answer (401, a wrong base URL): one wording for both. */
export function fatalStopLine(reason: string): string {
  return `stopped consuming: ${reason}`;
}

/** Pages of a feed failing in a row on a lock: what the last timeout named (the lock and its holder). */
export interface LockBlocked {
  lock: string;
  since: number;
  failures: number;
}

/** A feed whose pages failed this many times in a row on a lock shows it in /readyz, `status` and the console. */
export const LOCK_BLOCKED_REPORT_FAILURES = 2;

/** /readyz's (and feed_stops') line for a feed whose pages keep failing on a lock. */
export function lockBlockedLine(blocked: LockBlocked): string {
  return `blocked: ${blocked.failures} pages in a row timed out waiting for ${blocked.lock} (retrying)`;
}

/** Why a feed stopped, in /readyz's words, and the command that fixes it when one does. PHI-free. */
export interface FeedStop {
  reason: string;
  command: string | null;
}

export interface WorkerStateListener {
  /** `position`: the feed checkpoint the page committed (null: a draining source's position moved) */
  pageApplied?(page: AppliedPageRecord, position: { iterator: string; version: number } | null): void;
  /** a poll brought nothing new at its iterator: a successful request, nothing applied */
  emptyPoll?(poll: EmptyPoll): void;
  /** the feed checkpoint as read from the database (a pass start, a reload after a conflict) */
  checkpointLoaded?(checkpoint: { iterator: string | null; version: number }): void;
  /** this process gave up (or lost) the feed lease */
  becameStandby?(): void;
  /** a request to the operator failed and will be retried by the client */
  upstreamRetry?(reason: UpstreamFailureReason): void;
  /** a poll failed for good (after the client's retries); reason is set for upstream failures */
  pollFailed?(source: FailureSource, reason: UpstreamFailureReason | undefined): void;
  /** the operator refused the credentials: consuming stopped */
  fatal?(): void;
  /** the feed stopped for something a person must fix (a FeedStop), or (null) consumes again */
  stopChanged?(stop: FeedStop | null): void;
  /** this process took the feed lease (counted to see flapping) */
  becameLeader?(): void;
  /** the retention cleaner committed a batch that removed `rows` rows of `retentionClass` */
  retentionPurged?(retentionClass: string, rows: number): void;
  /** the statistics task analyzed `table` (`rowsChanged` since its previous ANALYZE) in `durationMs` */
  tableAnalyzed?(table: string, rowsChanged: number, durationMs: number): void;
}
