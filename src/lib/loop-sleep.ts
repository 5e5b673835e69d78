import { abortableSleep } from './abortable-sleep.js';

/** A wait the loop can cut short: resolves after `ms`, or as soon as `signal` aborts. */
export type LoopSleep = (ms: number, signal: AbortSignal) => Promise<void>;

/**
 * The default LoopSleep. Unlike abortableSleep it resolves on abort: the loop
 * re-checks its stopping flag after every wait, so an abort is not an error here.
 */
export const sleepUnlessAborted: LoopSleep = async (ms, signal) => {
  try {
    await abortableSleep(ms, signal);
  } catch (error) {
    if (!signal.aborted) throw error;
  }
};
