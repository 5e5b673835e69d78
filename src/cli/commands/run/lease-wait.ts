import { CliUsageError } from '../../context/errors.js';

/** `run --once` waits this long for a feed's lease by default: a cron job every few minutes can live with it. */
export const DEFAULT_LEASE_WAIT_S = 60;
const MAX_LEASE_WAIT_S = 86_400;

/** `--wait-for-lease <seconds>` in ms; refuses (exit 2) a value that is not 0..86400 whole seconds, or the flag without --once. */
export function leaseWaitMsFrom(value: string | undefined, once: boolean): number {
  if (value === undefined) return DEFAULT_LEASE_WAIT_S * 1000;
  if (!once) throw new CliUsageError('--wait-for-lease: applies only with --once (the daemon waits as standby for as long as it runs)');
  if (!/^\d{1,5}$/.test(value) || Number(value) > MAX_LEASE_WAIT_S) {
    throw new CliUsageError(
      `--wait-for-lease: must be whole seconds from 0 to ${MAX_LEASE_WAIT_S} (got ${JSON.stringify(value.slice(0, 20))})`,
    );
  }
  return Number(value) * 1000;
}
