import { FatalProbeError } from './fatal-probe-error.js';
import { WaitTimeoutError } from './wait-timeout-error.js';

export interface WaitOptions {
  timeoutMs: number;
  /** pause between probes; the probe itself may take longer */
  intervalMs?: number;
}

/**
 * Polls `probe` until it returns a value other than undefined/false, and returns
 * that value. Used only to wait on other processes, always with a deadline; the
 * last probe error or value is in the timeout message.
 */
export async function waitFor<T>(
  description: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  options: WaitOptions,
): Promise<T> {
  const started = Date.now();
  const deadline = started + options.timeoutMs;
  const interval = options.intervalMs ?? 100;
  let last = 'no probe finished';
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      last = `last probe returned ${String(value)}`;
    } catch (error) {
      if (error instanceof FatalProbeError) throw error;
      last = `last probe threw: ${error instanceof Error ? error.message : String(error)}`;
    }
    if (Date.now() >= deadline) {
      throw new WaitTimeoutError(`timed out after ${Date.now() - started} ms waiting for ${description} (${last})`);
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
