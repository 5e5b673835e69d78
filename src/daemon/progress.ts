import type { Logger } from '../log/log.js';
import type { WorkerState } from '../sync/state/worker-state.js';

export interface ProgressReporterOptions {
  state: WorkerState;
  clock: { now(): number };
  log: Logger;
  /** a terminal on stderr: redraw one status line; otherwise log a line every intervalMs */
  tty: NodeJS.WriteStream | undefined;
  intervalMs: number;
  /** runs `fn` after `ms` (default: an unref'd setTimeout); returns its cancel. Tests pass their own. */
  schedule?: (fn: () => void, ms: number) => () => void;
}

function scheduleTimeout(fn: () => void, ms: number): () => void {
  const timer = setTimeout(fn, ms);
  timer.unref();
  return () => clearTimeout(timer);
}

// a redraw more often than this only burns terminal bandwidth
const TTY_REDRAW_MS = 200;

/**
 * Shows a drain's progress (pages, events, rate): a live line on a TTY; elsewhere (a pod, a unit,
 * `npm start` piped) a log line for the first applied page, then at most one per intervalMs, the
 * last pages of a burst said when their interval ends. Counts only, no event content.
 * Returns its stop function, which clears the live line.
 */
export function startProgressReporter(options: ProgressReporterOptions): () => void {
  const { state, clock, tty } = options;
  const schedule = options.schedule ?? scheduleTimeout;
  const startedAt = clock.now();
  // the first applied page is said at once: a short drain (the demo's) must not pass in silence
  let lastShownAt = Number.NEGATIVE_INFINITY;
  let lastShownEvents = -1;
  let drawn = false;
  let cancelTrailing: (() => void) | undefined;

  const describe = () => {
    const { totals, backlog } = state.snapshot();
    const seconds = Math.max(0.001, (clock.now() - startedAt) / 1000);
    return {
      pages: totals.pages,
      events: totals.received,
      inserted: totals.inserted,
      rate: Math.round(totals.received / seconds),
      backlog,
    };
  };

  const show = () => {
    cancelTrailing?.();
    cancelTrailing = undefined;
    const progress = describe();
    // caught up and nothing new: a steady daemon should not log every poll
    if (!tty && progress.events === lastShownEvents) return;
    lastShownAt = clock.now();
    lastShownEvents = progress.events;
    if (tty) {
      tty.write(`\r\u001b[2Kpages ${progress.pages}  events ${progress.events}  new ${progress.inserted}  ${progress.rate} events/s`);
      drawn = true;
    } else {
      options.log.info(progress, 'drain progress');
    }
  };

  const unsubscribe = state.subscribe({
    pageApplied() {
      const interval = tty ? TTY_REDRAW_MS : options.intervalMs;
      const wait = lastShownAt + interval - clock.now();
      if (wait <= 0) return show();
      // rate-limited: the pages of this interval are said once it ends, even if none follows
      if (!tty && cancelTrailing === undefined) cancelTrailing = schedule(show, wait);
    },
  });

  return () => {
    unsubscribe();
    cancelTrailing?.();
    if (tty && drawn) tty.write('\r\u001b[2K');
  };
}
