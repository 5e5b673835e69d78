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
