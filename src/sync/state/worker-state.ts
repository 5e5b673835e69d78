import type { CursorProblemContext, CursorProblemKind, ResetHint } from './cursor-problem.js';

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
  /** this process took the feed lease (counted to see flapping) */
  becameLeader?(): void;
  /** the retention cleaner committed a batch that removed `rows` rows of `retentionClass` */
  retentionPurged?(retentionClass: string, rows: number): void;
  /** the statistics task analyzed `table` (`rowsChanged` since its previous ANALYZE) in `durationMs` */
  tableAnalyzed?(table: string, rowsChanged: number, durationMs: number): void;
}

/**
 * The worker's facts, written by the poller and the lease loop, read by
 * /healthz, /readyz, /metrics and the progress reporter. Holds identifiers and
 * counts only, never event content.
 */
export class WorkerState {
  private role: WorkerRole = 'starting';
  private loopAlive = true;
  private loopDeathReason: string | null = null;
  private fatalReason: string | null = null;
  private cursorProblem: WorkerSnapshot['cursorProblem'] = null;
  private leaderSince: number | null = null;
  private lastSuccessAt: number | null = null;
  private lastPollAt: number | null = null;
  private newestOccurredAt: number | null = null;
  private consecutiveFailures = 0;
  private lastFailure: WorkerSnapshot['lastFailure'] = null;
  private matchLockWaitSince: number | null = null;
  private noProgressStreak = 0;
  private backlog = false;
  private checkpoint: WorkerSnapshot['checkpoint'] = null;
  private sources: FeedSourceSummary[] = [];
  private readonly totals: WorkerTotals = emptyTotals();
  private readonly listeners = new Set<WorkerStateListener>();

  constructor(private readonly clock: { now(): number }) {}

  /** Registers a listener; returns its removal. */
  subscribe(listener: WorkerStateListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  becameLeader(): void {
    this.role = 'leader';
    this.leaderSince = this.clock.now();
    for (const listener of this.listeners) listener.becameLeader?.();
  }

  /** The retention cleaner removed `rows` rows of one class (a committed batch). */
  retentionPurged(retentionClass: string, rows: number): void {
    for (const listener of this.listeners) listener.retentionPurged?.(retentionClass, rows);
  }

  /** The statistics task ran ANALYZE on one table. */
  tableAnalyzed(table: string, rowsChanged: number, durationMs: number): void {
    for (const listener of this.listeners) listener.tableAnalyzed?.(table, rowsChanged, durationMs);
  }

  becameStandby(): void {
    this.role = 'standby';
    this.leaderSince = null;
    this.backlog = false;
    for (const listener of this.listeners) listener.becameStandby?.();
  }

  stopped(): void {
    this.role = 'stopped';
    this.leaderSince = null;
  }

  sourcesLoaded(sources: readonly FeedSourceSummary[]): void {
    this.sources = sources.map((source) => ({ ...source }));
  }

  checkpointLoaded(checkpoint: { iterator: string | null; version: number; updatedAt: Date | number }): void {
    const updatedAt = checkpoint.updatedAt instanceof Date ? checkpoint.updatedAt.getTime() : checkpoint.updatedAt;
    this.checkpoint = { iterator: checkpoint.iterator, version: checkpoint.version, updatedAt };
    for (const listener of this.listeners) listener.checkpointLoaded?.({ iterator: checkpoint.iterator, version: checkpoint.version });
  }

  /** `position` null: the page moved a draining source's position, not the feed's checkpoint (kept as it was) */
  pageApplied(page: AppliedPageRecord, position: { iterator: string; version: number } | null, noProgress: boolean): void {
    const now = this.clock.now();
    this.lastSuccessAt = now;
    this.lastPollAt = now;
    // a replay or a reordered page brings older events: the newest seen only moves forward
    if (page.newestOccurredAt !== undefined && (this.newestOccurredAt === null || page.newestOccurredAt > this.newestOccurredAt)) {
      this.newestOccurredAt = page.newestOccurredAt;
    }
    this.consecutiveFailures = 0;
    this.lastFailure = null;
    this.noProgressStreak = noProgress ? this.noProgressStreak + 1 : 0;
    this.backlog = !page.done;
    if (position) this.checkpoint = { iterator: position.iterator, version: position.version, updatedAt: now };
    addPage(this.totals, page);
    for (const listener of this.listeners) listener.pageApplied?.(page, position);
  }

  /**
   * A poll that brought nothing new at the position it asked for: a success for readiness, nothing
   * applied (no transaction, so no page in the totals and the checkpoint position unchanged).
   */
  pollSucceeded(poll: EmptyPoll): void {
    this.lastSuccessAt = this.clock.now();
    this.lastPollAt = this.lastSuccessAt;
    this.consecutiveFailures = 0;
    this.lastFailure = null;
    this.noProgressStreak = poll.noProgress ? this.noProgressStreak + 1 : 0;
    this.backlog = !poll.done;
    for (const listener of this.listeners) listener.emptyPoll?.(poll);
  }

  pollFailed(source: FailureSource, summary: string, reason?: UpstreamFailureReason): number {
    this.consecutiveFailures += 1;
    this.lastPollAt = this.clock.now();
    this.lastFailure = { source, summary, at: this.lastPollAt };
    for (const listener of this.listeners) listener.pollFailed?.(source, source === 'upstream' ? (reason ?? 'other') : undefined);
    return this.consecutiveFailures;
  }

  checkpointConflict(): void {
    this.totals.conflicts += 1;
  }

  upstreamRetry(reason: UpstreamFailureReason = 'other'): void {
    this.totals.upstreamRetries += 1;
    for (const listener of this.listeners) listener.upstreamRetry?.(reason);
  }

  fatal(reason: string): void {
    this.fatalReason = reason;
    this.lastPollAt = this.clock.now();
    for (const listener of this.listeners) listener.fatal?.();
  }

  cursorStopped(feed: string, kind: CursorProblemKind, context: CursorProblemContext = {}): void {
    const { at, reset } = context;
    if (this.cursorProblem?.kind !== kind || this.cursorProblem.at !== at) {
      this.cursorProblem = { feed, kind, since: this.clock.now(), ...(at === undefined ? {} : { at }), ...(reset ? { reset } : {}) };
    }
  }

  cursorCleared(): void {
    this.cursorProblem = null;
  }

  loopDied(reason: string): void {
    this.loopAlive = false;
    this.loopDeathReason = reason;
  }

  /** The page in flight asked for the match lock. */
  matchLockWaitStarted(): void {
    this.matchLockWaitSince = this.clock.now();
  }

  /** The match lock was granted, or the page gave up on it. */
  matchLockWaitEnded(): void {
    this.matchLockWaitSince = null;
  }

  snapshot(): WorkerSnapshot {
    return {
      role: this.role,
      loopAlive: this.loopAlive,
      loopDeathReason: this.loopDeathReason,
      fatalReason: this.fatalReason,
      cursorProblem: this.cursorProblem,
      leaderSince: this.leaderSince,
      lastSuccessAt: this.lastSuccessAt,
      lastPollAt: this.lastPollAt,
      newestOccurredAt: this.newestOccurredAt,
      consecutiveFailures: this.consecutiveFailures,
      lastFailure: this.lastFailure,
      matchLockWaitSince: this.matchLockWaitSince,
      noProgressStreak: this.noProgressStreak,
      backlog: this.backlog,
      checkpoint: this.checkpoint,
      sources: this.sources.map((source) => ({ ...source })),
      totals: { ...this.totals, quarantined: { ...this.totals.quarantined } },
    };
  }
}

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

function addPage(totals: WorkerTotals, page: AppliedPageRecord): void {
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
