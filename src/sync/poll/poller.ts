import { EventsNotFoundError } from '../../intake/errors/events-not-found-error.js';
import { UnauthorizedError } from '../../intake/errors/unauthorized-error.js';
import {
  checkpointNeedsTouch,
  classifyEventsFailure,
  describeCursorProblem,
  eventsFailureFacts,
  resetToBlame,
  suspectsGap,
} from '../state/cursor-problem.js';
import { CheckpointConflictError } from '../apply/errors/checkpoint-conflict-error.js';
import { DrainIncompleteError } from './errors/drain-incomplete-error.js';
import { OversizedEventError } from './errors/oversized-event-error.js';
import { upstreamFailureReason } from '../state/failure-reason.js';
import { summarizeFailure } from '../state/failure-summary.js';
import type { DelayReason } from './next-delay.js';
import { combineTotals, type FailureSource } from '../state/worker-state.js';

import type { AppliedPage, DrainSummary, FetchedPage, LoadedCheckpoint, PollerDeps } from './poll-loop.js';
import type { PassOutcome } from './pass-outcome.js';

export type { AppliedPage, DrainSummary, FetchedPage, LoadedCheckpoint, PollerDeps, PollLoop } from './poll-loop.js';

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** A page request in flight or answered, not yet taken by the loop. */
interface PendingFetch {
  iterator: string | null;
  startedAt: number;
  result: Promise<Settled<FetchedPage>>;
  /** aborts this request and the one chained after it */
  abort: AbortController;
  /** the request for the page after this one, sent as soon as this one arrived while the loop was busy */
  next?: PendingFetch;
}

/**
 * Pages requested and not yet taken by the loop, at most: the one the loop will apply next and the
 * one after it. A slow apply then never delays a request, and at most one page waits in memory.
 */
const MAX_PAGES_AHEAD = 2;

/**
 * The poll loop for one feed. Each pass loads the checkpoint, then fetches and
 * applies pages until the operator says done, fetching page N+1 while page N
 * commits. Failures back off and never advance the checkpoint; a 401 stops
 * consuming for good; a moved checkpoint (reset or another worker) is reloaded,
 * never overwritten.
 */
export class Poller {
  private stopping = false;
  private readonly stopSignal = new AbortController();
  private running: Promise<unknown> | undefined;
  private conflictStreak = 0;
  /** clock.now() when the last page fetch of a pass started: caught-up polls are paced start to start */
  private lastFetchStartedAt = 0;
  /** set while stopped on a cursor problem: the checkpoint version it was found at */
  private heldAtVersion: number | undefined;
  /** true while the loop waits for a fetch: a page arriving then is left unprepared, so the next fetch starts first */
  private awaitingFetch = false;
  /** pages requested this pass and not yet taken by the loop (see MAX_PAGES_AHEAD) */
  private pagesAhead = 0;
  /** bumped at every pass: a request of an earlier pass, answering late, chains nothing */
  private passNumber = 0;
  /** the position as last read or committed by this loop, and when; undefined forces a read */
  private known: { iterator: string | null; version: number; at: number; updatedAtMs: number } | undefined;

  constructor(private readonly deps: PollerDeps) {}

  /** Polls until stop(), or until a 401 (then it resolves with the reason in state). */
  run(): Promise<void> {
    return this.begin(async () => {
      await this.loop(false);
    });
  }

  /**
   * Drains until the operator says done, then resolves with what was applied.
   * Rejects with DrainIncompleteError on a 401 or after drainMaxFailures failures in a row.
   */
  drain(): Promise<DrainSummary> {
    return this.begin(async () => {
      const startedAt = this.deps.clock.now();
      const before = this.deps.state.snapshot().totals;
      const drained = await this.loop(true);
      const elapsedMs = this.deps.clock.now() - startedAt;
      const totals = combineTotals(this.deps.state.snapshot().totals, before, -1);
      return { ...totals, drained, elapsedMs, eventsPerSecond: elapsedMs > 0 ? (totals.received * 1000) / elapsedMs : 0 };
    });
  }

  /** Aborts any wait or fetch, lets a page being applied commit or roll back, and awaits the loop. Idempotent. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.stopSignal.abort();
    await this.running?.catch(() => {});
  }

  private begin<T>(body: () => Promise<T>): Promise<T> {
    if (this.running) throw new Error('a Poller runs once; create a new one');
    const promise = body();
    this.running = promise;
    return promise;
  }

  /** Returns true when it ended caught up in drain mode, false when stopped. */
  private async loop(untilCaughtUp: boolean): Promise<boolean> {
    const { state, log } = this.deps;
    let wait: DelayReason | undefined;
    while (!this.stopping) {
      if (wait) {
        const caughtUp = wait.kind === 'caught-up';
        let delayMs = this.deps.nextDelay(wait);
        // the interval runs from the last poll's start, so the time that poll took does not add to an event's wait
        if (caughtUp) delayMs = Math.max(0, delayMs - (this.deps.clock.now() - this.lastFetchStartedAt));
        wait = undefined;
        // a caught-up wait always goes through sleep, even at 0: the loop yields between polls
        if (delayMs > 0 || caughtUp) await this.deps.sleep(delayMs, this.stopSignal.signal);
        if (this.stopping) break;
      }
      const outcome = await this.pass();
      this.conflictStreak = outcome.kind === 'conflict' ? this.conflictStreak + 1 : 0;
      switch (outcome.kind) {
        case 'caught-up':
          if (await this.finishedAfterCaughtUp()) return true;
          if (untilCaughtUp) return true;
          wait = { kind: 'caught-up' };
          break;
        case 'no-progress':
          log.warn(
            { streak: state.snapshot().noProgressStreak },
            'page made no progress (same iterator, nothing new, not done); backing off',
          );
          wait = { kind: 'no-progress', streak: state.snapshot().noProgressStreak };
          break;
        case 'conflict':
          state.checkpointConflict();
          log.warn({ streak: this.conflictStreak }, 'checkpoint moved under this worker (reset or another worker); reloading it');
          wait = { kind: 'conflict', streak: this.conflictStreak };
          break;
        case 'failure': {
          const summary = summarizeFailure(outcome.error);
          const reason = outcome.source === 'upstream' ? upstreamFailureReason(outcome.error) : undefined;
          const failures = state.pollFailed(outcome.source, summary, reason);
          log.warn({ source: outcome.source, failures, error: summary }, 'poll failed; backing off');
          if (untilCaughtUp && failures >= (this.deps.drainMaxFailures ?? Infinity)) {
            throw new DrainIncompleteError(`gave up after ${failures} consecutive failures; last: ${summary}`, { cause: outcome.error });
          }
          wait = { kind: 'failure', consecutiveFailures: failures };
          break;
        }
        case 'fatal': {
          const summary = summarizeFailure(outcome.error);
          state.fatal(summary);
          const why =
            outcome.error instanceof EventsNotFoundError
              ? 'the operator base URL is wrong (404 on /events); stopped consuming (fix it and restart)'
              : 'operator refused our credentials; stopped consuming (fix them and restart)';
          log.error({ error: summary }, why);
          if (untilCaughtUp) throw new DrainIncompleteError(`stopped: ${summary}`, { cause: outcome.error });
          return false;
        }
        case 'cursor': {
          const context = { at: outcome.at, reset: outcome.reset ?? null };
          const reason = describeCursorProblem(this.feed, outcome.problem, context);
          const entering = this.heldAtVersion === undefined;
          this.heldAtVersion = outcome.version;
          state.cursorStopped(this.feed, outcome.problem, context);
          if (entering) log.error({ problem: outcome.problem, version: outcome.version }, reason);
          if (untilCaughtUp) throw new DrainIncompleteError(reason);
          // no request to the operator until the checkpoint moves: each wait re-reads only the checkpoint
          wait = { kind: 'caught-up' };
          break;
        }
        case 'held':
          wait = { kind: 'caught-up' };
          break;
        case 'stopped':
          break;
      }
    }
    return false;
  }

  /**
   * One checkpoint load followed by pages until done, a failure, a conflict or stop. A page that
   * brings nothing at the iterator it was asked for writes nothing: an empty poll costs the checkpoint
   * read (which also notices a reset) and the request, no transaction.
   */
  private async pass(): Promise<PassOutcome> {
    const { state, clock } = this.deps;
    let { known } = this;
    // anything but a pass that ended caught up or without progress leaves the position unknown
    this.known = undefined;
    // stopped on a cursor problem, every wait reads the checkpoint again: resync or a reset moves it
    const reload = !known || this.heldAtVersion !== undefined || clock.now() - known.at >= (this.deps.checkpointReloadMs ?? 0);
    if (!known || reload) {
      let checkpoint: LoadedCheckpoint;
      try {
        checkpoint = await this.deps.loadCheckpoint();
      } catch (error) {
        return this.failure('database', error);
      }
      if (!this.deps.secondarySource) state.checkpointLoaded(checkpoint);
      const updatedAtMs = checkpoint.updatedAt instanceof Date ? checkpoint.updatedAt.getTime() : checkpoint.updatedAt;
      known = { iterator: checkpoint.iterator, version: checkpoint.version, at: clock.now(), updatedAtMs };
      if (this.heldAtVersion !== undefined) {
        if (known.version === this.heldAtVersion) return { kind: 'held' };
        this.heldAtVersion = undefined;
        state.cursorCleared();
        this.deps.log.warn({ version: known.version }, 'the checkpoint moved (resync or reset): consuming the feed again');
      }
      if (suspectsGap({ iterator: known.iterator, updatedAtMs }, clock.now(), this.deps.retentionMs)) {
        return { kind: 'cursor', problem: 'gap-suspected', version: known.version };
      }
    }
    let { iterator, version } = known;
    this.passNumber++;
    this.pagesAhead = 0;
    let pending = this.fetch(iterator, this.stopSignal.signal);
    for (;;) {
      const fetchStartedAt = pending.startedAt;
      this.lastFetchStartedAt = fetchStartedAt;
      this.awaitingFetch = true;
      const fetched = await pending.result;
      this.awaitingFetch = false;
      this.pagesAhead--;
      if (!fetched.ok) {
        pending.next?.abort.abort();
        // the page was asked for at `iterator` (a prefetch too: the loop takes pages in order, so it is the position just committed)
        if (!this.stopping && fetched.error instanceof OversizedEventError)
          return { kind: 'cursor', problem: 'oversized-event', version, at: iterator };
        const problem = this.stopping ? null : classifyEventsFailure(eventsFailureFacts(fetched.error, iterator !== null));
        if (problem) return { kind: 'cursor', problem, version, reset: await this.resetToBlame(iterator) };
        return this.failure('upstream', fetched.error);
      }
      if (this.stopping) {
        pending.next?.abort.abort();
        return { kind: 'stopped' };
      }
      const page = fetched.value;
      const advanced = page.meta.iterator !== iterator;
      if (!advanced && page.events.length === 0) {
        // nothing to store and no position to move: no transaction (the version stays, so does the audit of pages)
        const noProgress = !page.meta.done;
        if (this.deps.touchCheckpoint && checkpointNeedsTouch(known.updatedAtMs, clock.now(), this.deps.retentionMs)) {
          // the retention check reads a quiet checkpoint's age as the time nobody polled: say we did
          try {
            await this.deps.touchCheckpoint(version);
          } catch (error) {
            return this.failure('database', error);
          }
          known.updatedAtMs = clock.now();
        }
        state.pollSucceeded({ done: page.meta.done, noProgress, durationMs: clock.now() - fetchStartedAt });
        this.known = known;
        return noProgress ? { kind: 'no-progress' } : { kind: 'caught-up' };
      }
      // pipelining: the next page's position is known now, so fetch it while this one commits (unless
      // that request already left when this page arrived)
      let prefetch = pending.next;
      if (!page.meta.done && advanced) {
        if (!prefetch) {
          prefetch = this.fetch(page.meta.iterator, this.stopSignal.signal);
          // the request is only built and written after some promise turns: let it leave before this page's
          // validation and statement take the thread (over a 50 ms network that was 4 ms late per page)
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      } else if (prefetch) {
        prefetch.abort.abort();
        prefetch = undefined;
      }
      let applied: AppliedPage;
      try {
        // a page that arrived while the loop waited for it comes unprepared: applyPage validates it, behind the prefetch
        applied = await this.deps.applyPage({
          expectedVersion: version,
          nextIterator: page.meta.iterator,
          events: page.events,
          ...(page.prepared ? { prepared: page.prepared } : {}),
        });
      } catch (error) {
        // the prefetched pages were read from a position that was never committed
        prefetch?.abort.abort();
        return this.failure('database', error);
      }
      const noProgress = !page.meta.done && !advanced && applied.inserted === 0;
      iterator = page.meta.iterator;
      version = applied.version;
      // found by preparePage (in the prefetch, or by applyPage for a page the loop waited for)
      const newest = page.prepared?.newestOccurredAt ?? applied.newestOccurredAt;
      const record = {
        ...applied,
        durationMs: this.deps.clock.now() - fetchStartedAt,
        done: page.meta.done,
        ...(newest === undefined ? {} : { newestOccurredAt: newest }),
      };
      state.pageApplied(record, this.deps.secondarySource ? null : { iterator, version }, noProgress);
      // a committed compare-and-set proves the position as well as a read would
      known = { iterator, version, at: clock.now(), updatedAtMs: clock.now() };
      if (page.meta.done || noProgress) this.known = known;
      if (page.meta.done) return { kind: 'caught-up' };
      if (noProgress) return { kind: 'no-progress' };
      if (this.stopping) {
        prefetch?.abort.abort();
        return { kind: 'stopped' };
      }
      // same iterator but new events: ask again at once; a repeat that brings nothing is no-progress
      pending = prefetch ?? this.fetch(iterator, this.stopSignal.signal);
    }
  }

  private async finishedAfterCaughtUp(): Promise<boolean> {
    const version = this.known?.version;
    if (!this.deps.afterCaughtUp || version === undefined || this.stopping) return false;
    try {
      return await this.deps.afterCaughtUp(version);
    } catch (error) {
      // the hook's write is retried at the next caught-up pass; the loop itself goes on
      this.deps.log.warn({ error: summarizeFailure(error) }, 'after a caught-up pass: the follow-up failed; retrying at the next one');
      return false;
    }
  }

  // best effort: without the reset history the advice stays the generic one
  private async resetToBlame(iterator: string | null) {
    if (!this.deps.latestReset || iterator === null) return null;
    try {
      return resetToBlame(iterator, await this.deps.latestReset());
    } catch {
      return null;
    }
  }

  private get feed(): string {
    return this.deps.feed ?? 'default';
  }

  private fetch(iterator: string | null, parentSignal: AbortSignal): PendingFetch {
    const abort = new AbortController();
    const signal = AbortSignal.any([parentSignal, abort.signal]);
    const pass = this.passNumber;
    this.pagesAhead++;
    const handle: PendingFetch = {
      iterator,
      startedAt: this.deps.clock.now(),
      abort,
      result: Promise.resolve({ ok: false, error: undefined }),
    };
    const prepare = this.deps.preparePage;
    // settled at once so a prefetch that fails while a page commits is never an unhandled rejection
    handle.result = this.deps.fetchPage({ iterator }, signal).then(
      (value): Settled<FetchedPage> => {
        // the loop is waiting for this page: it sends the next request itself, then validates
        if (this.awaitingFetch) return { ok: true, value };
        // arriving while an earlier page is still being applied: request the one after at once, so a
        // slow apply never holds the next request back, then validate this one in the apply's shadow
        const more = !value.meta.done && value.meta.iterator !== iterator;
        if (more && !signal.aborted && pass === this.passNumber && this.pagesAhead < MAX_PAGES_AHEAD) {
          handle.next = this.fetch(value.meta.iterator, signal);
        }
        if (!prepare || value.prepared) return { ok: true, value };
        try {
          return { ok: true, value: { ...value, prepared: prepare(value.events) } };
        } catch {
          // applyPage validates it again and reports the failure where it belongs
          return { ok: true, value };
        }
      },
      (error: unknown): Settled<FetchedPage> => ({ ok: false, error }),
    );
    return handle;
  }

  private failure(source: FailureSource, error: unknown): PassOutcome {
    if (this.stopping) return { kind: 'stopped' };
    if (error instanceof CheckpointConflictError) return { kind: 'conflict' };
    // what only a person can fix: retrying a bad key or a wrong base URL only hides it
    if (error instanceof UnauthorizedError || error instanceof EventsNotFoundError) return { kind: 'fatal', error };
    return { kind: 'failure', source, error };
  }
}
