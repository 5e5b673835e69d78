import type { Logger } from '../../log/log.js';
import { summarizeFailure } from '../state/failure-summary.js';
import type { DrainSummary, PollLoop } from '../poll/poller.js';
import type { PlannedSource } from './source-plan.js';
import type { LoopSleep } from '../../lib/loop-sleep.js';
import { combineTotals, emptyTotals } from '../state/worker-totals.js';

/** The sources of one term, as loaded: what to read and the fingerprint a later load is compared with. */
export interface SourceSet {
  sources: PlannedSource[];
  signature: string;
}

export interface SourcesPollerDeps {
  /** the feed's sources now (planSources over feed_sources); a SourceMismatchError ends the term */
  loadSources(): Promise<SourceSet>;
  /**
   * A Poller for one source. `changed` is called by its checkpoint load when the fingerprint read there
   * differs from `signature` (a migration was recorded, or a source retired): every poller then restarts.
   */
  createPoller(source: PlannedSource, signature: string, changed: () => void): PollLoop;
  sleep: LoopSleep;
  /** wait before loading the sources again after the database failed */
  retryMs: number;
  log: Logger;
}

/**
 * The poll loop of a feed with several operator base URLs (an API version migration under way):
 * one Poller per non-retired source, all under the feed's one lease, each with its own position.
 * Events are deduplicated by (feed, id) and statuses only move forward, so the sources may deliver
 * the same occurrence twice in any order. When the sources change (recorded by `subscriptions
 * migrate`, or a draining source retired) the pollers stop and the term goes on with the new set.
 */
export class SourcesPoller implements PollLoop {
  private stopping = false;
  private readonly stopSignal = new AbortController();
  private pollers: PollLoop[] = [];
  private running: Promise<unknown> | undefined;

  constructor(private readonly deps: SourcesPollerDeps) {}

  run(): Promise<void> {
    return this.begin(async () => {
      while (!this.stopping) {
        const set = await this.load();
        if (!set) continue;
        const changed = new AbortController();
        this.pollers = set.sources.map((source) => this.deps.createPoller(source, set.signature, () => changed.abort()));
        if (this.stopping) await Promise.all(this.pollers.map((poller) => poller.stop()));
        const runs = this.pollers.map((poller) => poller.run());
        // the first to end: a poller (a 401 parks the whole feed, as with one source), a change, or stop()
        await Promise.race([...runs, aborted(changed.signal), aborted(this.stopSignal.signal)]);
        await Promise.all(this.pollers.map((poller) => poller.stop()));
        await Promise.allSettled(runs);
        this.pollers = [];
        if (!changed.signal.aborted) return;
        this.deps.log.info({ sources: set.sources.length }, "the feed's sources changed: reading the new set");
      }
    });
  }

  /** `run --once`: drains every non-retired source (each to its end), sums what they applied. */
  drain(): Promise<DrainSummary> {
    return this.begin(async () => {
      let set: SourceSet | undefined;
      while (!set && !this.stopping) set = await this.load();
      if (!set) return { ...emptyTotals(), drained: false, elapsedMs: 0, eventsPerSecond: 0 };
      // one source after the other: a drain's summary is the difference of the feed's shared totals, which a
      // concurrent drain would add to. A change met while draining is left for the next run.
      const summaries: DrainSummary[] = [];
      for (const source of set.sources) {
        if (this.stopping) break;
        const poller = this.deps.createPoller(source, set.signature, () => {});
        this.pollers = [poller];
        summaries.push(await poller.drain());
      }
      this.pollers = [];
      return sumDrains(summaries);
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.stopSignal.abort();
    await Promise.all(this.pollers.map((poller) => poller.stop()));
    await this.running?.catch(() => {});
  }

  private begin<T>(body: () => Promise<T>): Promise<T> {
    if (this.running) throw new Error('a SourcesPoller runs once; create a new one');
    const promise = body();
    this.running = promise;
    return promise;
  }

  private async load(): Promise<SourceSet | undefined> {
    try {
      return await this.deps.loadSources();
    } catch (error) {
      if (error instanceof Error && error.name === 'SourceMismatchError') throw error;
      this.deps.log.warn({ error: summarizeFailure(error) }, "could not read the feed's sources; retrying");
      await this.deps.sleep(this.deps.retryMs, this.stopSignal.signal);
      return undefined;
    }
  }
}

function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

function sumDrains(summaries: readonly DrainSummary[]): DrainSummary {
  let totals = emptyTotals();
  for (const s of summaries) totals = combineTotals(totals, s);
  const elapsedMs = Math.max(0, ...summaries.map((s) => s.elapsedMs));
  return {
    ...totals,
    drained: summaries.every((s) => s.drained),
    elapsedMs,
    eventsPerSecond: elapsedMs > 0 ? (totals.received * 1000) / elapsedMs : 0,
  };
}
