import type { Logger } from '../../log/log.js';
import type { PollLoop } from '../poll/poll-loop.js';
import type { FeedLease } from './feed-lease.js';

/** What a term's poller may ask of its leader loop (PollerDeps.confirmLeadership). */
export interface Leadership {
  /**
   * Checks the lease now. False (not held): the term is over, its poller is being stopped, and the
   * worker steps down as when the periodic check finds the lease lost. Rejects when the check itself
   * failed (the database is unreachable): the caller writes nothing and retries.
   */
  confirm(): Promise<boolean>;
}

/**
 * One term as leader: its poller, and whether it ended because the lease was lost. Two things end a
 * term as lost: the periodic lease check (leader-loop.ts), and the poller itself, which asks before
 * acting on a checkpoint someone else moved. The second closes a zombie's window: a worker frozen
 * past the lease TTL (SIGSTOP, a VM pause) resumes with its poller mid-pass, and the next reload
 * would otherwise hand it the new leader's position to commit on top of before its own lease check
 * ran (test/faults/04-three-workers.test.ts saw it on a loaded machine).
 */
export class LeaderTerm implements Leadership {
  poller: PollLoop | undefined;
  private ended = false;

  constructor(
    private readonly lease: Pick<FeedLease, 'stillHeld'>,
    private readonly log: Pick<Logger, 'warn'>,
  ) {}

  /** true once the term ended because the lease was lost */
  get lost(): boolean {
    return this.ended;
  }

  async confirm(): Promise<boolean> {
    if (this.ended) return false;
    if (await this.lease.stillHeld()) return true;
    this.stepDown('the checkpoint moved and the feed lease is no longer held (another worker leads): stepping down');
    return false;
  }

  /** Ends the term as lost, once: its poller stops (not awaited: the poller may be the caller). */
  stepDown(why: string): void {
    if (this.ended) return;
    this.ended = true;
    this.log.warn(why);
    void this.poller?.stop();
  }
}
