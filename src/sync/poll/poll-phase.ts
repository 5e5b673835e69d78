/**
 * Where in the poll interval a caught-up feed polls: a fraction of the interval fixed by the feed's
 * name (FNV-1a), the same on every replica and across restarts, so a process's feeds (and a
 * deployment's) poll spread over the interval instead of in step after a common start. Pure.
 */
export function pollPhaseMs(feed: string, intervalMs: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < feed.length; i++) {
    hash ^= feed.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  // a final avalanche: feed names differ mostly in their last characters (clinic-041, clinic-042)
  hash = (hash ^ (hash >>> 16)) >>> 0;
  hash = Math.imul(hash, 0x85ebca6b) >>> 0;
  hash = (hash ^ (hash >>> 13)) >>> 0;
  return Math.floor((hash / 2 ** 32) * intervalMs);
}

/**
 * Pure: how long until the feed's next slot, the times equal to `phaseMs` modulo `intervalMs`. A
 * caught-up feed waits for it instead of a fixed interval after its last poll, so polls stay spread
 * whatever their latency, and no event waits longer than the interval to be polled.
 */
export function slotDelay(nowMs: number, intervalMs: number, phaseMs: number): number {
  const into = (((nowMs - phaseMs) % intervalMs) + intervalMs) % intervalMs;
  return into === 0 ? intervalMs : intervalMs - into;
}

/**
 * Pure: how long after a poll that started at `startedAtMs` the feed's next slot comes, taking the
 * first slot at least `minGapMs` after that start. Measured from the poll's start, not from when it
 * ended: a poll that ends before its own slot (a timer that fired a millisecond early, a reply faster
 * than that) must not poll again at that slot, and one that ends after it must not wait a second slot.
 */
export function slotDelayAfterPoll(startedAtMs: number, intervalMs: number, phaseMs: number, minGapMs: number): number {
  const earliest = startedAtMs + minGapMs;
  return minGapMs + ((((phaseMs - earliest) % intervalMs) + intervalMs) % intervalMs);
}
