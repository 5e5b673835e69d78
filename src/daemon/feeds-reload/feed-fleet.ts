import type { FeedConfig } from '../../config/feeds-file.js';
import { retireFeeds } from '../../db/feed-retirements.js';
import type { FeedLeases } from '../../sync/leadership/lease.js';
import { attachFeedObservers } from '../feed-observers.js';
import { claimFeeds, composeFeedWorker, type Closers, type FeedWorker, type FeedWorkersContext } from '../feed-workers.js';
import type { ReloadPlan } from './reload-plan.js';

interface RunningFeed {
  config: FeedConfig;
  entry: FeedWorker;
  /** what this feed alone opened: its observers, the demo's simulator */
  closers: Closers;
  /** worker.run(), once started; settles when the worker stops */
  run: Promise<void> | undefined;
  settled: boolean;
}

/**
 * The feeds this process runs, changed while it runs: a reload stops the feeds it removes (their
 * lease released, their data left to retention), starts the ones it adds, and restarts the ones
 * whose values changed, leaving every other feed's worker untouched. `entries` is read by the
 * health endpoint at each request, so it is changed in place.
 */
export class FeedFleet {
  readonly entries: FeedWorker[] = [];
  private readonly running = new Map<string, RunningFeed>();
  private readonly failures: unknown[] = [];
  private applying = 0;
  private stopping = false;
  private endedResolve: () => void = () => {};
  private readonly ended = new Promise<void>((resolve) => {
    this.endedResolve = resolve;
  });

  constructor(
    private readonly context: FeedWorkersContext,
    private readonly leases: FeedLeases,
    /** FEEDS_FILE is set: logs name their feed whatever the count */
    private readonly several: boolean,
  ) {}

  /** The configuration of every running feed, in the order they were added. */
  configs(): FeedConfig[] {
    return [...this.running.values()].map((r) => r.config);
  }

  /** Composes a feed's worker and its observers; `start` runs it. */
  async add(feed: FeedConfig): Promise<FeedWorker> {
    const closers: Closers = [];
    const entry = await composeFeedWorker(this.context, this.leases, feed, this.several, closers);
    const { config, database, log, clock } = this.context;
    attachFeedObservers({ feed: feed.name, state: entry.state, several: this.several, config, database, log, clock, closers });
    if (this.stopping) {
      // stopAll ran while this feed was being composed: it never runs, and nothing of it stays open
      for (const { close } of closers.reverse()) await close().catch(() => {});
      return entry;
    }
    this.running.set(feed.name, { config: feed, entry, closers, run: undefined, settled: false });
    this.entries.push(entry);
    return entry;
  }

  /** Runs every composed worker not yet running (the daemon; `run --once` drains instead). */
  startAll(): void {
    for (const running of this.running.values()) {
      if (running.run || this.stopping) continue;
      running.run = running.entry.worker.run().then(
        () => this.settle(running),
        (error: unknown) => {
          // one feed's worker ending (a bug) must not end the others: it is reported once all have ended
          this.failures.push(error);
          this.settle(running);
        },
      );
    }
  }

  /**
   * Applies a reload: removed and changed feeds stop first (a restarted feed's lease is free before
   * its new worker asks for it), then the lease session counts the new set, then added and changed
   * feeds start. `next` is the whole new file.
   */
  async apply(plan: ReloadPlan, next: readonly FeedConfig[]): Promise<void> {
    if (this.stopping) return;
    this.applying += 1;
    try {
      await Promise.all([...plan.stop, ...plan.restart.map((f) => f.name)].map((name) => this.remove(name)));
      await retireFeeds(this.context.database.db, plan.stop);
      this.leases.setFeeds(next.map((f) => f.name));
      const added = [...plan.start, ...plan.restart];
      if (added.length > 0)
        await claimFeeds(
          this.context,
          added.map((f) => f.name),
          next.length,
        );
      for (const feed of added) if (!this.stopping) await this.add(feed);
      this.startAll();
    } finally {
      this.applying -= 1;
      this.checkEnded();
    }
  }

  /** Stops every worker (the page in flight commits or rolls back) and closes what each feed opened. */
  async stopAll(): Promise<void> {
    this.stopping = true;
    await Promise.all([...this.running.keys()].map((name) => this.remove(name, { keepEntry: true })));
    this.checkEnded();
  }

  /** Settles once every worker has ended (after stopAll); rejects with the first worker that ended with an error. */
  async untilEnded(): Promise<void> {
    await this.ended;
    if (this.failures.length > 0) throw this.failures[0];
  }

  private async remove(name: string, options: { keepEntry?: boolean } = {}): Promise<void> {
    const running = this.running.get(name);
    if (!running) return;
    // stop() releases the lease (leader-loop.ts): a replica that still has the feed may take it now
    await running.entry.worker.stop();
    await running.run;
    for (const { close } of running.closers.reverse()) await close().catch(() => {});
    running.closers.length = 0;
    if (options.keepEntry) return;
    this.running.delete(name);
    const index = this.entries.indexOf(running.entry);
    if (index >= 0) this.entries.splice(index, 1);
  }

  private settle(running: RunningFeed): void {
    running.settled = true;
    this.checkEnded();
  }

  private checkEnded(): void {
    if (this.applying > 0) return;
    const all = [...this.running.values()];
    // a worker never started (stopped before it ran) counts as ended once the fleet stops
    if (all.length > 0 && all.every((r) => r.settled || (this.stopping && r.run === undefined))) this.endedResolve();
  }
}
