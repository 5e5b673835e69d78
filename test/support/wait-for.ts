import { FatalProbeError } from './fatal-probe-error.js';
import { WaitTimeoutError } from './wait-timeout-error.js';

export interface WaitOptions {
  /** what is awaited, named in the timeout error */
  what: string;
  /** a budget only a hang exhausts: the wait ends as soon as the probe succeeds */
  timeoutMs: number;
  /** pause between probes (default 25 ms); the probe itself may take longer */
  intervalMs?: number;
  /**
   * 'fail' (the default): a probe that throws ends the wait with its error. 'retry': a thrown error
   * counts as "not yet" (a process still starting refuses connections) and is named in the timeout
   * error, except a FatalProbeError (the awaited process died), which ends the wait at once.
   */
  probeErrors?: 'fail' | 'retry';
}

/**
 * Polls `probe` until it returns a value other than undefined or false, and returns that value. The one
 * wait of the tests: for something outside the test's control (another process, the database server),
 * never a pause; in-process time is injected instead. Past the budget, a WaitTimeoutError naming what
 * was awaited and the last probe's outcome.
 */
export async function waitFor<T>(probe: () => Promise<T | undefined | false> | T | undefined | false, options: WaitOptions): Promise<T> {
  const started = Date.now();
  const deadline = started + options.timeoutMs;
  const interval = options.intervalMs ?? 25;
  let last = 'no probe finished';
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      last = `last probe returned ${String(value)}`;
    } catch (error) {
      if (options.probeErrors !== 'retry' || error instanceof FatalProbeError) throw error;
      last = `last probe threw: ${error instanceof Error ? error.message : String(error)}`;
    }
    if (Date.now() >= deadline) {
      throw new WaitTimeoutError(`timed out after ${Date.now() - started} ms waiting for ${options.what} (${last})`);
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
