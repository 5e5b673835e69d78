import type { Logger } from '../../log/log.js';
import { summarizeFailure } from '../state/failure-summary.js';
import type { FeedLease } from './lease.js';
import type { DrainSummary, PollLoop } from '../poll/poller.js';
import { settlesWithin } from '../../lib/settles-within.js';
import type { LoopSleep } from '../../lib/loop-sleep.js';
import type { WorkerState } from '../state/worker-state.js';
import { LeaseHeldError } from './errors/lease-held-error.js';
import { type Leadership, LeaderTerm } from './leader-term.js';

export type { Leadership } from './leader-term.js';

/** Work that runs beside the poller for as long as one term as leader lasts (the outbox delivery). */
export interface LeaderTask {
  run(): Promise<void>;
  /** ends run() promptly: aborts its waits and requests */
  stop(): Promise<void>;
}

export interface SyncWorkerDeps {
  lease: FeedLease;
  /**
   * a fresh Poller (or SourcesPoller) for each term as leader; it asks `leadership` before acting on a
   * checkpoint someone else moved (PollerDeps.confirmLeadership)
   */
  createPoller(leadership: Leadership): PollLoop;
  /** fresh tasks for each term as leader, started with the poller and stopped before the lease is released */
  createLeaderTasks?(): LeaderTask[];
  state: WorkerState;
  sleep: LoopSleep;
  /** how often a standby retries the lease, and how often the leader checks it still holds it */
  leaseRetryMs: number;
  /**
   * how long stop() waits for the page in flight (default 5 s): a database call that never
   * settles (a stranded connection) must not hold the process past its shutdown grace
   */
  stopWaitMs?: number;
  log: Logger;
  /** the feed, for the message of a lease that stayed held elsewhere */
  feed?: string;
  /** who holds the lease, for that message (lease-holder.ts); never throws past a summary */
  describeLeaseHolder?: () => Promise<string>;
  /** clock for drain()'s wait for the lease; default Date.now */
  now?: () => number;
  /** the feed's pause (`feeds pause`, feed-pauses.ts), asked at each lease check; never rejects. None: never paused */
  pauseOf?: () => Promise<{ reason: string } | null>;
}

export interface DrainOptions {
  /** give up (LeaseHeldError) when another process still holds the lease after this long; default: wait for ever */
  leaseWaitMs?: number | undefined;
}

const DEFAULT_STOP_WAIT_MS = 5_000;

/**
 * One process's worker for one feed: waits as standby until it holds the
 * lease, polls as leader while it keeps it, and steps down (stops applying) as
 * soon as the lock's connection is lost. The checkpoint's compare-and-set
 * covers the moment between losing the lock and noticing it.
 */
export class SyncWorker {
  private stopping = false;
  private readonly stopSignal = new AbortController();
  private poller: PollLoop | undefined;
  /** the last lease attempt failed: its lock session may still be open (a leader's is closed when its term ends) */
  private standbySessionOpen = false;
  private running: Promise<unknown> | undefined;

  constructor(private readonly deps: SyncWorkerDeps) {}

  /** The daemon: standby, leader, standby again on loss, until stop(). A 401 parks it (lease released). */
  run(): Promise<void> {
    return this.begin(async () => {
      while (!this.stopping) {
        if (!(await this.acquire())) continue;
        if (await this.holdWhilePaused()) continue;
        const term = new LeaderTerm(this.deps.lease, this.deps.log);
        const poller = this.deps.createPoller(term);
        const lost = await this.lead(term, poller, () => poller.run());
        if (this.deps.state.snapshot().fatalReason !== null) {
          await this.parkUntilStopped();
          break;
        }
        if (lost) this.deps.state.becameStandby();
      }
      await this.closeStandbySession();
      this.deps.state.stopped();
    });
  }

  /**
   * `run --once`: waits for the lease (at most `leaseWaitMs`, then LeaseHeldError naming the
   * holder), drains the feed, releases the lease.
   */
  drain(options: DrainOptions = {}): Promise<DrainSummary | undefined> {
    const now = this.deps.now ?? Date.now;
    const started = now();
    return this.begin(async () => {
      try {
        while (!this.stopping) {
          if (!(await this.acquire())) {
            if (options.leaseWaitMs !== undefined && now() - started >= options.leaseWaitMs)
              throw await this.leaseHeld(options.leaseWaitMs);
            continue;
          }
          const pause = await this.pauseNow();
          if (pause) {
            // a paused feed polls nothing, a one-off drain included
            this.deps.log.info({ reason: pause.reason }, 'the feed is paused (feeds pause): not draining it');
            await this.deps.lease.release();
            return undefined;
          }
          let summary: DrainSummary | undefined;
          const term = new LeaderTerm(this.deps.lease, this.deps.log);
          const poller = this.deps.createPoller(term);
          const lost = await this.lead(term, poller, async () => {
            summary = await poller.drain();
          });
          if (!lost) return summary;
          this.deps.state.becameStandby();
        }
        return undefined;
      } finally {
        await this.closeStandbySession();
        this.deps.state.stopped();
      }
    });
  }

  /**
   * Stops polling (the page in flight commits or rolls back), releases the lease, awaits the loop
   * for at most stopWaitMs. Past that a database call is stuck: the lease is released here and the
   * caller closes the connections; the server then commits or rolls back whatever was in flight,
   * and the checkpoint's compare-and-set makes either outcome safe. Idempotent.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.stopSignal.abort();
    const loopEnded = settlesWithin(Promise.all([this.poller?.stop(), this.running]), this.deps.stopWaitMs ?? DEFAULT_STOP_WAIT_MS);
    if (await loopEnded) return;
    this.deps.log.warn(
      { waitedMs: this.deps.stopWaitMs ?? DEFAULT_STOP_WAIT_MS },
      'a database call did not settle while stopping: releasing the lease and leaving it to the server',
    );
    await this.deps.lease.release();
  }

  private async leaseHeld(waitedMs: number): Promise<LeaseHeldError> {
    const holder = await (this.deps.describeLeaseHolder?.() ?? Promise.resolve('another process')).catch(
      (error: unknown) => `unknown (${summarizeFailure(error)})`,
    );
    const feed = this.deps.feed ?? 'default';
    return new LeaseHeldError(
      `feed ${feed}: another process holds the feed lease (${holder}); gave up after --wait-for-lease ${Math.round(waitedMs / 1000)}s. ` +
        'A running daemon already syncs this feed: run --once is for when none does',
    );
  }

  private begin<T>(body: () => Promise<T>): Promise<T> {
    if (this.running) throw new Error('a SyncWorker runs once; create a new one');
    const promise = body().catch((error: unknown) => {
      if (!(error instanceof Error && (error.name === 'DrainIncompleteError' || error.name === 'LeaseHeldError')))
        this.deps.state.loopDied(summarizeFailure(error));
      throw error;
    });
    this.running = promise;
    return promise;
  }

  /** One attempt at the lease; on failure waits out the retry interval as standby. */
  private async acquire(): Promise<boolean> {
    const { state, log } = this.deps;
    try {
      this.standbySessionOpen = true;
      if (await this.deps.lease.tryAcquire()) {
        this.standbySessionOpen = false;
        state.becameLeader();
        log.info('holding the feed lease: polling as leader');
        return true;
      }
      if (state.snapshot().role !== 'standby') log.info('another worker holds the feed lease: waiting as standby');
      state.becameStandby();
    } catch (error) {
      state.becameStandby();
      log.warn({ error: summarizeFailure(error) }, 'could not reach the database to take the feed lease; retrying');
    }
    await this.deps.sleep(this.deps.leaseRetryMs, this.stopSignal.signal);
    return false;
  }

  /**
   * Runs one term as leader, checking the lease every retry interval; returns
   * true when the term ended because the lease was lost.
   */
  private async lead(term: LeaderTerm, poller: PollLoop, body: () => Promise<void>): Promise<boolean> {
    this.poller = poller;
    term.poller = poller;
    // stop() may have come while the lease was being taken, before this poller existed
    if (this.stopping) await poller.stop();
    const tasks = this.deps.createLeaderTasks?.() ?? [];
    const tasksRunning = tasks.map((task) =>
      task.run().catch((error: unknown) => this.deps.log.warn({ error: summarizeFailure(error) }, 'a leader task ended with an error')),
    );
    const watch = new AbortController();
    const watching = (async () => {
      while (!watch.signal.aborted && !term.lost) {
        await this.deps.sleep(this.deps.leaseRetryMs, watch.signal);
        if (watch.signal.aborted || term.lost) return;
        if (!(await this.deps.lease.stillHeld())) {
          term.stepDown('lost the feed lease (its connection was closed): stepping down');
          await poller.stop();
          return;
        }
        if (await this.pauseNow()) {
          // the term ends (leader tasks stopped, lease released); run() takes the lease again and holds it paused
          await poller.stop();
          return;
        }
      }
    })();
    try {
      await body();
    } finally {
      watch.abort();
      // a task's in-flight work must end before another process can take the lease and start its own
      await Promise.all(tasks.map((task) => task.stop().catch(() => {})));
      await Promise.all(tasksRunning);
      await watching;
      this.poller = undefined;
      await this.deps.lease.release();
    }
    return term.lost;
  }

  /**
   * A standby keeps its lock session open between attempts; on the way out it is closed, or its
   * socket keeps the process alive past its shutdown (a rollout SIGTERMs standbys too).
   */
  private async closeStandbySession(): Promise<void> {
    if (!this.standbySessionOpen) return;
    this.standbySessionOpen = false;
    await this.deps.lease.release();
  }

  private async pauseNow(): Promise<{ reason: string } | null> {
    return this.deps.pauseOf ? await this.deps.pauseOf().catch(() => null) : null;
  }

  /**
   * A paused feed's leader keeps the lease (no other replica polls it either) and polls and sends
   * nothing, checking at each lease check whether it still holds the lease and is still paused.
   * Reads as standby (health, metrics: its poll age must not alarm). False when the feed is not paused.
   */
  private async holdWhilePaused(): Promise<boolean> {
    const pause = await this.pauseNow();
    if (!pause) return false;
    const { state, log, lease } = this.deps;
    state.becameStandby();
    log.info({ reason: pause.reason }, 'the feed is paused (feeds pause): holding its lease, polling nothing');
    while (!this.stopping) {
      await this.deps.sleep(this.deps.leaseRetryMs, this.stopSignal.signal);
      if (this.stopping) break;
      if (!(await lease.stillHeld())) {
        log.warn('lost the feed lease while paused');
        return true;
      }
      if (!(await this.pauseNow())) {
        log.info('the feed was resumed (feeds resume): polling again');
        return true;
      }
    }
    await lease.release();
    return true;
  }

  private async parkUntilStopped(): Promise<void> {
    if (this.stopSignal.signal.aborted) return;
    await new Promise<void>((resolve) => this.stopSignal.signal.addEventListener('abort', () => resolve(), { once: true }));
  }
}
