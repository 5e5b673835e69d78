import { type CursorProblemContext, type CursorProblemKind, cursorProblemCommand, describeCursorProblem } from './cursor-problem.js';
import {
  type AppliedPageRecord,
  type EmptyPoll,
  type FailureSource,
  type FeedSourceSummary,
  type FeedStop,
  fatalStopLine,
  LOCK_BLOCKED_REPORT_FAILURES,
  lockBlockedLine,
  type UpstreamFailureReason,
  type WorkerRole,
  type WorkerSnapshot,
  type WorkerStateListener,
  type WorkerTotals,
} from './worker-snapshot.js';
import { addPage, emptyTotals } from './worker-totals.js';

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
  private lockBlocked: WorkerSnapshot['lockBlocked'] = null;
  private noProgressStreak = 0;
  private backlog = false;
  private checkpoint: WorkerSnapshot['checkpoint'] = null;
  private sources: FeedSourceSummary[] = [];
  private readonly totals: WorkerTotals = emptyTotals();
  private readonly listeners = new Set<WorkerStateListener>();
  /**
   * the stop reason last told to the listeners (null: consuming), so each change is told once;
   * undefined until the first: a stop recorded before this process started is cleared by its first success
   */
  private stopTold: string | null | undefined = undefined;

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
    this.lockBlocked = null;
    this.noProgressStreak = noProgress ? this.noProgressStreak + 1 : 0;
    this.backlog = !page.done;
    if (position) this.checkpoint = { iterator: position.iterator, version: position.version, updatedAt: now };
    addPage(this.totals, page);
    for (const listener of this.listeners) listener.pageApplied?.(page, position);
    this.stopChanged(null);
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
    this.lockBlocked = null;
    this.noProgressStreak = poll.noProgress ? this.noProgressStreak + 1 : 0;
    this.backlog = !poll.done;
    for (const listener of this.listeners) listener.emptyPoll?.(poll);
    this.stopChanged(null);
  }

  /** `lockWait`: the failure was a lock_timeout, and this is the lock and holder the server named */
  pollFailed(source: FailureSource, summary: string, reason?: UpstreamFailureReason, lockWait?: string): number {
    this.consecutiveFailures += 1;
    this.lastPollAt = this.clock.now();
    this.lastFailure = { source, summary, at: this.lastPollAt };
    for (const listener of this.listeners) listener.pollFailed?.(source, source === 'upstream' ? (reason ?? 'other') : undefined);
    if (lockWait !== undefined) {
      const failures = (this.lockBlocked?.failures ?? 0) + 1;
      this.lockBlocked = { lock: lockWait, since: this.lockBlocked?.since ?? this.lastPollAt, failures };
      // in feed_stops, so `status` and the console's Feeds page show the blocker too; cleared by the next page applied
      if (failures >= LOCK_BLOCKED_REPORT_FAILURES) this.stopChanged({ reason: lockBlockedLine(this.lockBlocked), command: null });
    }
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
    // /readyz's words; the fix is a setting and a restart, not a command
    this.stopChanged({ reason: fatalStopLine(reason), command: null });
  }

  cursorStopped(feed: string, kind: CursorProblemKind, context: CursorProblemContext = {}): void {
    const { at, reset } = context;
    if (this.cursorProblem?.kind !== kind || this.cursorProblem.at !== at) {
      this.cursorProblem = { feed, kind, since: this.clock.now(), ...(at === undefined ? {} : { at }), ...(reset ? { reset } : {}) };
    }
    this.stopChanged({ reason: describeCursorProblem(feed, kind, context), command: cursorProblemCommand(feed, kind, context) });
  }

  cursorCleared(): void {
    this.cursorProblem = null;
    this.stopChanged(null);
  }

  /** Tells the listeners when the feed stops for something a person must fix, or consumes again; once per change. */
  private stopChanged(stop: FeedStop | null): void {
    const told = stop?.reason ?? null;
    if (told === this.stopTold) return;
    this.stopTold = told;
    for (const listener of this.listeners) listener.stopChanged?.(stop);
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
      lockBlocked: this.lockBlocked,
      noProgressStreak: this.noProgressStreak,
      backlog: this.backlog,
      checkpoint: this.checkpoint,
      sources: this.sources.map((source) => ({ ...source })),
      totals: { ...this.totals, quarantined: { ...this.totals.quarantined } },
    };
  }
}
