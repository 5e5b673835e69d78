import type { Logger } from '../log/log.js';

export interface ShutdownOnSignalOptions {
  /** graceful shutdown: stop polling (the page in flight commits or rolls back), release the lease, close */
  shutdown(): Promise<void>;
  /** after this long the process exits anyway */
  graceMs: number;
  log: Logger;
  /** the clock the repeat window is read from (tests inject one) */
  now?: () => number;
}

/**
 * One Ctrl-C in a terminal reaches every process of the foreground group: npm forwards its SIGINT to
 * the worker, and the worker's own relaunch parent forwards its copy too, so a single press arrives
 * two or three times within milliseconds. Copies inside this window are that same press; a signal
 * after it is a second request and forces the exit.
 */
export const SAME_PRESS_MS = 1_000;

/** Pure: what a signal means, given when the first one arrived (undefined: none yet). */
export function signalMeaning(firstAt: number | undefined, now: number): 'shutdown' | 'same-press' | 'force' {
  if (firstAt === undefined) return 'shutdown';
  return now - firstAt < SAME_PRESS_MS ? 'same-press' : 'force';
}

/**
 * Handles SIGTERM and SIGINT for the process — the entry point is the only
 * place that does. The first signal starts a graceful shutdown (once) and the
 * command's own flow then exits normally; if that has not happened within the
 * grace period, or a second signal arrives (after SAME_PRESS_MS), the process exits with code 1.
 * Returns the removal of the handlers.
 */
export function shutdownOnSignal(options: ShutdownOnSignalOptions): () => void {
  const now = options.now ?? Date.now;
  let firstAt: number | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    const at = now();
    const meaning = signalMeaning(firstAt, at);
    if (meaning === 'same-press') return;
    if (meaning === 'force') {
      options.log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
      return;
    }
    firstAt = at;
    options.log.info({ signal, graceMs: options.graceMs }, 'shutting down: finishing the page in flight');
    const forced = setTimeout(() => {
      options.log.error({ graceMs: options.graceMs }, 'shutdown did not finish within the grace period: forcing exit');
      process.exit(1);
    }, options.graceMs);
    // the timer alone must not keep a cleanly shut down process alive
    forced.unref();
    options.shutdown().catch((error: unknown) => {
      options.log.error({ error: error instanceof Error ? error.name : typeof error }, 'shutdown failed');
      process.exitCode = 1;
    });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  };
}

/**
 * Calls `reload` on each SIGHUP (re-read FEEDS_FILE: feeds-reload/). Without this handler a
 * SIGHUP would end the process. Returns the removal of the handler.
 */
export function reloadOnHangup(reload: () => void): () => void {
  const onHangup = () => reload();
  process.on('SIGHUP', onHangup);
  return () => {
    process.off('SIGHUP', onHangup);
  };
}
