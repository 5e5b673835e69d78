import type { Logger } from '../log.js';
import type { WorkerState } from '../sync/state/worker-state.js';

export interface ProgressReporterOptions {
  state: WorkerState;
  clock: { now(): number };
  log: Logger;
  /** a terminal on stderr: redraw one status line; otherwise log a line every intervalMs */
  tty: NodeJS.WriteStream | undefined;
  intervalMs: number;
}

// a redraw more often than this only burns terminal bandwidth
const TTY_REDRAW_MS = 200;

/**
 * Shows a long drain's progress (pages, events, rate): a live line on a TTY,
 * a log line every few seconds elsewhere. Counts only, no event content.
 * Returns its stop function, which clears the live line.
 */
export function startProgressReporter(options: ProgressReporterOptions): () => void {
  const { state, clock, tty } = options;
  const startedAt = clock.now();
  let lastShownAt = startedAt;
  let lastShownEvents = -1;
  let drawn = false;

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

  const unsubscribe = state.subscribe({
    pageApplied() {
      const now = clock.now();
      const interval = tty ? TTY_REDRAW_MS : options.intervalMs;
      if (now - lastShownAt < interval) return;
      const progress = describe();
      // caught up and nothing new: a steady daemon should not log every poll
      if (!tty && progress.events === lastShownEvents) return;
      lastShownAt = now;
      lastShownEvents = progress.events;
      if (tty) {
        tty.write(`\r\u001b[2Kpages ${progress.pages}  events ${progress.events}  new ${progress.inserted}  ${progress.rate} events/s`);
        drawn = true;
      } else {
        options.log.info(progress, 'drain progress');
      }
    },
  });

  return () => {
    unsubscribe();
    if (tty && drawn) tty.write('\r\u001b[2K');
  };
}
