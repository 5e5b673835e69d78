import type { Logger } from '../log/log.js';

export interface ShutdownOnSignalOptions {
  /** graceful shutdown: stop polling (the page in flight commits or rolls back), release the lease, close */
  shutdown(): Promise<void>;
  /** after this long the process exits anyway */
  graceMs: number;
  log: Logger;
}

/**
 * Handles SIGTERM and SIGINT for the process — the entry point is the only
 * place that does. The first signal starts a graceful shutdown (once) and the
 * command's own flow then exits normally; if that has not happened within the
 * grace period, or a second signal arrives, the process exits with code 1.
 * Returns the removal of the handlers.
 */
export function shutdownOnSignal(options: ShutdownOnSignalOptions): () => void {
  let started = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (started) {
      options.log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    started = true;
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
