import type { Logger } from '../../log/log.js';
import type { WorkerState } from '../state/worker-state.js';
import type { ApplyTimings } from '../state/worker-snapshot.js';
import {
  BacklogTracker,
  type KnownPosition,
  movedByOther,
  nonZeroReasons,
  QuarantineWarnings,
  type QuarantineTally,
} from './activity-decisions.js';
import type { CheckpointMove } from '../feed-admin/checkpoint-mover.js';

export interface ActivityLogOptions {
  state: WorkerState;
  log: Logger;
  clock: { now(): number };
  /** at most one quarantine warning per this interval while pages come faster (PROGRESS_LOG_INTERVAL_MS) */
  intervalMs: number;
  /** who made the latest recorded checkpoint move (latestCheckpointMove); undefined: another worker */
  whoMoved(): Promise<CheckpointMove | undefined>;
}

/**
 * What a feed's daemon says about its own work, beside the progress line: a warning when events are
 * quarantined (counts by reason, per page or per interval), an info line when a backlog is caught up
 * (events, time), a warning when someone else moved the checkpoint (who, from, to), and at debug level
 * one line per page and per empty poll with their timings. Identifiers and counts only. Returns the
 * detach function, which also says what quarantine counts were still pending.
 */
export function attachActivityLog(options: ActivityLogOptions): () => void {
  const { state, log, clock } = options;
  const quarantine = new QuarantineWarnings(options.intervalMs);
  const backlog = new BacklogTracker();
  let known: KnownPosition | undefined;

  const warnQuarantine = (tally: QuarantineTally | undefined) => {
    if (!tally) return;
    log.warn(
      { quarantined: tally.events, pages: tally.pages, by_reason: nonZeroReasons(tally.counts) },
      tally.pages === 1
        ? `${tally.events} event(s) quarantined on this page (see \`intake-sync quarantine list\`)`
        : `${tally.events} event(s) quarantined over ${tally.pages} pages (see \`intake-sync quarantine list\`)`,
    );
  };
  const sayCaughtUp = (caughtUp: ReturnType<BacklogTracker['page']>) => {
    if (!caughtUp) return;
    log.info(
      { events: caughtUp.events, pages: caughtUp.pages, seconds: Math.round(caughtUp.ms / 100) / 10 },
      `caught up after a backlog: ${caughtUp.events} event(s) in ${(caughtUp.ms / 1000).toFixed(1)} s`,
    );
  };
  const reportMove = (from: KnownPosition, to: KnownPosition) => {
    options
      .whoMoved()
      .then((move) => {
        const recorded = move !== undefined && move.to === to.iterator;
        log.warn(
          {
            from: from.iterator,
            to: to.iterator,
            version: to.version,
            by: recorded ? move.by : 'another worker (no reset recorded)',
            ...(recorded && move.actor ? { actor: move.actor } : {}),
            ...(recorded ? { at: move.at.toISOString() } : {}),
          },
          'the checkpoint was moved by someone else; reading on from the new position',
        );
      })
      .catch(() => {
        log.warn(
          { from: from.iterator, to: to.iterator, version: to.version },
          'the checkpoint was moved by someone else; reading on from the new position',
        );
      });
  };

  const unsubscribe = state.subscribe({
    pageApplied(page, position) {
      const now = clock.now();
      if (position) known = { iterator: position.iterator, version: position.version };
      log.debug(
        {
          received: page.received,
          inserted: page.inserted,
          duplicates: page.duplicates,
          matched: page.matched,
          status_changes: page.statusChanges,
          done: page.done,
          ms: page.durationMs,
          ...(page.timingsMs ? { timings_ms: roundedTimings(page.timingsMs) } : {}),
        },
        'page applied',
      );
      warnQuarantine(quarantine.page(page.quarantined, now));
      sayCaughtUp(backlog.page(page, now - page.durationMs, now));
      if (page.done) warnQuarantine(quarantine.flush());
    },
    emptyPoll(poll) {
      log.debug({ done: poll.done, ...(poll.durationMs === undefined ? {} : { ms: poll.durationMs }) }, 'poll: nothing new');
      warnQuarantine(quarantine.flush());
      sayCaughtUp(backlog.emptyPoll(poll.done, clock.now()));
    },
    checkpointLoaded(checkpoint) {
      const before = known;
      known = { iterator: checkpoint.iterator, version: checkpoint.version };
      log.debug({ iterator: checkpoint.iterator, version: checkpoint.version }, 'checkpoint read');
      if (before && movedByOther(before, known)) reportMove(before, known);
    },
    becameLeader() {
      known = undefined;
      backlog.reset();
    },
    becameStandby() {
      warnQuarantine(quarantine.flush());
      known = undefined;
      backlog.reset();
    },
  });
  return () => {
    unsubscribe();
    warnQuarantine(quarantine.flush());
  };
}

/** Phase timings to a tenth of a millisecond: a debug line, not a benchmark. */
function roundedTimings(timings: ApplyTimings): ApplyTimings {
  const round = (ms: number) => Math.round(ms * 10) / 10;
  return { prepare: round(timings.prepare), validate: round(timings.validate), write: round(timings.write), commit: round(timings.commit) };
}
