import { StoppableLoop } from '../../lib/stoppable-loop.js';
import { summarizeFailure } from '../state/failure-summary.js';
import { combineTotals } from '../state/worker-totals.js';
import type { DelayReason } from './next-delay.js';
import { OutcomePolicy } from './outcome-policy.js';
import { runPass } from './poll-pass.js';
import type { DrainSummary, PassMemory, PollerDeps, PollLoop } from './poll-loop.js';
import { PrefetchPipeline } from './prefetch-pipeline.js';

export type { AppliedPage, DrainSummary, FetchedPage, LoadedCheckpoint, PollerDeps, PollLoop } from './poll-loop.js';

/**
 * The poll loop for one feed. Each pass (poll-pass.ts) loads the checkpoint, then fetches and applies
 * pages until the operator says done, fetching page N+1 while page N commits (prefetch-pipeline.ts).
 * What follows a pass is the outcome policy's (outcome-policy.ts): failures back off and never advance
 * the checkpoint; a 401 stops consuming for good; a moved checkpoint (reset or another worker) is
 * reloaded, never overwritten. Here: the waits between passes and the two ways to run.
 */
export class Poller extends StoppableLoop implements PollLoop {
  private readonly memory: PassMemory = { known: undefined, lastVersion: undefined, heldAtVersion: undefined, lastFetchStartedAt: 0 };
  private readonly pipeline: PrefetchPipeline;
  private readonly policy: OutcomePolicy;

  constructor(private readonly deps: PollerDeps) {
    super();
    this.pipeline = new PrefetchPipeline(deps);
    this.policy = new OutcomePolicy(deps, this.memory);
  }

  /** Polls until stop(), or until a 401 (then it resolves with the reason in state). */
  override run(): Promise<void> {
    return this.startOnce(() => this.loop());
  }

  /**
   * Drains until the operator says done, then resolves with what was applied.
   * Rejects with DrainIncompleteError on a 401 or after drainMaxFailures failures in a row.
   */
  drain(): Promise<DrainSummary> {
    return this.startOnce(async () => {
      const startedAt = this.deps.clock.now();
      const before = this.deps.state.snapshot().totals;
      const drained = await this.passes(true);
      const elapsedMs = this.deps.clock.now() - startedAt;
      const totals = combineTotals(this.deps.state.snapshot().totals, before, -1);
      return { ...totals, drained, elapsedMs, eventsPerSecond: elapsedMs > 0 ? (totals.received * 1000) / elapsedMs : 0 };
    });
  }

  protected async loop(): Promise<void> {
    await this.passes(false);
  }

  /** Returns true when it ended caught up in drain mode, false when stopped. */
  private async passes(untilCaughtUp: boolean): Promise<boolean> {
    let wait: DelayReason | undefined;
    while (!this.stopping) {
      if (wait) {
        const caughtUp = wait.kind === 'caught-up';
        let delayMs = caughtUp ? this.deps.nextDelay(wait, this.memory.lastFetchStartedAt) : this.deps.nextDelay(wait);
        // the interval runs from the last poll's start, so the time that poll took does not add to an event's wait
        if (caughtUp) delayMs = Math.max(0, delayMs - (this.deps.clock.now() - this.memory.lastFetchStartedAt));
        wait = undefined;
        // a caught-up wait always goes through sleep, even at 0: the loop yields between polls
        if (delayMs > 0 || caughtUp) await this.deps.sleep(delayMs, this.stopSignal.signal);
        if (this.stopping) break;
      }
      // a pass that sends no request (held on a cursor problem) is paced from its own start, not an old poll's
      this.memory.lastFetchStartedAt = this.deps.clock.now();
      const outcome = await runPass(this.deps, this.memory, this.pipeline, this.stopSignal.signal);
      const step = this.policy.next(outcome, untilCaughtUp);
      switch (step.kind) {
        case 'caught-up':
          // the hook runs in a drain too: a draining source retires at its end
          if ((await this.finishedAfterCaughtUp()) || untilCaughtUp) return true;
          wait = { kind: 'caught-up' };
          break;
        case 'wait':
          wait = step.reason;
          break;
        case 'end':
          return false;
        case 'again':
          break;
      }
    }
    return false;
  }

  private async finishedAfterCaughtUp(): Promise<boolean> {
    const version = this.memory.known?.version;
    if (!this.deps.afterCaughtUp || version === undefined || this.stopping) return false;
    try {
      return await this.deps.afterCaughtUp(version);
    } catch (error) {
      // the hook's write is retried at the next caught-up pass; the loop itself goes on
      this.deps.log.warn({ error: summarizeFailure(error) }, 'after a caught-up pass: the follow-up failed; retrying at the next one');
      return false;
    }
  }
}
