import type { Db } from '../../db/connection.js';
import type { IntakeClient } from '../../intake/client.js';
import type { LoopSleep } from '../../lib/loop-sleep.js';
import type { Logger } from '../../log/log.js';
import { applyPage } from '../apply/apply-page.js';
import { preparePage } from '../apply/prepare-page.js';
import type { WorkerState } from '../state/worker-state.js';
import { latestCheckpointReset, loadCheckpoint, touchCheckpoint } from './checkpoint.js';
import { defaultDelayPolicy, nextDelay } from './next-delay.js';
import type { LoadedCheckpoint } from './poll-loop.js';
import { Poller } from './poller.js';
import { tracedApply, tracedFetch } from './poll-spans.js';
import { shrinkingFetch } from './shrinking-fetch.js';

/** The worker's collaborators and settings every poller of the feed shares. */
export interface FeedPollerWiring {
  db: Db;
  /** the feed's configured operator client (a source reading names its own) */
  client: Pick<IntakeClient, 'listEvents'>;
  settings: {
    feed: string;
    pageLimit: number;
    pollIntervalMs: number;
    pollBackoffMaxMs: number;
    leaseRetryMs: number;
    drainMaxFailures: number;
    retentionMs?: number;
    /** a caught-up feed's slot in the poll interval (poll-phase.ts); undefined: the jittered interval */
    pollPhaseMs?: number;
  };
  state: WorkerState;
  clock: { now(): number };
  sleep: LoopSleep;
  random: () => number;
  /** the worker's logger: the poller logs as its child `component: poller` */
  log: Logger;
  /** the term's leader loop, asked before acting on a checkpoint someone else moved (PollerDeps.confirmLeadership) */
  leadership?: { confirm(): Promise<boolean> };
}

/** One recorded source of the feed (an API version migration, feed_sources) read by its own poller. */
export interface SourceReading {
  baseUrl: string;
  client: Pick<IntakeClient, 'listEvents'>;
  /** the old source, read to its end after the migration: its position is not the feed's checkpoint */
  draining: boolean;
  loadCheckpoint(): Promise<LoadedCheckpoint>;
  /** called after each caught-up pass of a draining source, which retires there once read to its end (PollerDeps.afterCaughtUp) */
  afterCaughtUp?(version: number): Promise<boolean>;
}

/**
 * The one way a feed's poller is built: on the feed's checkpoint (no `source`), or on one recorded
 * source of the feed, whose pages record where they were read from. A draining source's counts go to
 * the feed's totals but not its position, and it reloads its position at every pass.
 */
export function createFeedPoller(wiring: FeedPollerWiring, source?: SourceReading): Poller {
  const { db, settings, state } = wiring;
  const { feed } = settings;
  const client = source?.client ?? wiring.client;
  const policy = defaultDelayPolicy(settings.pollIntervalMs, settings.pollBackoffMaxMs, settings.pollPhaseMs);
  const matchLockWait = { started: () => state.matchLockWaitStarted(), ended: () => state.matchLockWaitEnded() };
  const readFrom = source ? { readFrom: source.baseUrl, draining: source.draining } : {};
  const draining = source?.draining === true;
  return new Poller({
    // a page over MAX_RESPONSE_BYTES is asked again with a smaller limit, down to 1 (shrinking-fetch.ts)
    // each fetch is a poll span, each apply a page span under it (poll-spans.ts)
    fetchPage: tracedFetch(
      feed,
      settings.pageLimit,
      shrinkingFetch(
        ({ iterator, limit, onSent }, signal) =>
          client.listEvents({ ...(iterator === null ? {} : { iterator }), limit }, { signal, ...(onSent ? { onSent } : {}) }),
        settings.pageLimit,
        wiring.log,
      ),
    ),
    // the client reports when a request is written (request-sent.ts): a page is validated after its prefetch left
    fetchReportsSent: true,
    // a prefetched page is validated as it arrives, while the previous one commits
    preparePage,
    applyPage: tracedApply(db, feed, (page) => applyPage(db, { feed, ...page, ...readFrom, matchLockWait })),
    loadCheckpoint: source ? () => source.loadCheckpoint() : () => loadCheckpoint(db, feed),
    clock: wiring.clock,
    sleep: wiring.sleep,
    nextDelay: (reason, pollStartedAt) => nextDelay(reason, policy, wiring.random, wiring.clock.now(), pollStartedAt),
    state,
    log: wiring.log.child(draining ? { component: 'poller', base_url: source?.baseUrl } : { component: 'poller' }),
    drainMaxFailures: settings.drainMaxFailures,
    feed,
    ...(settings.retentionMs === undefined ? {} : { retentionMs: settings.retentionMs }),
    // caught up, the checkpoint is read at most every lease check (a reset is noticed within that),
    // not at every poll: a poll at 1 s then costs half a statement, not one. A draining source reads its
    // position at every pass (it retires on what that read says).
    checkpointReloadMs: draining ? 0 : settings.leaseRetryMs,
    touchCheckpoint: (expectedVersion) => touchCheckpoint(db, feed, expectedVersion),
    latestReset: () => latestCheckpointReset(db, feed),
    ...(wiring.leadership ? { confirmLeadership: wiring.leadership.confirm.bind(wiring.leadership) } : {}),
    ...(draining ? { secondarySource: true, ...(source?.afterCaughtUp ? { afterCaughtUp: source.afterCaughtUp } : {}) } : {}),
  });
}
