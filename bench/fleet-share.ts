// Fair share of the feed leases among replicas, as the bench judges it from the lease table.

/** Pure: the share each of `replicas` replicas should lead, ceil(feeds / replicas). */
export function fairShare(feeds: number, replicas: number): number {
  return Math.ceil(feeds / Math.max(1, replicas));
}

/**
 * Pure: whether `led` (feeds led per live replica, one entry per replica, zeros included) is a full
 * share: every feed led, and each replica within one feed of ceil(feeds / replicas).
 */
export function isFullShare(led: readonly number[], feeds: number): boolean {
  const share = fairShare(feeds, led.length);
  const total = led.reduce((sum, n) => sum + n, 0);
  return led.length > 0 && total === feeds && led.every((n) => Math.abs(n - share) <= 1);
}

/**
 * Tracks, sample after sample, how long each feed has gone without a live leader; the longest
 * stretch so far is the figure to hold against LEASE_TTL_MS plus one lease check.
 */
export class LeaderlessTracker {
  private readonly since = new Map<string, number>();
  private longest = 0;

  /** One sample at `nowMs`: the feeds without a live leader right now. */
  sample(nowMs: number, leaderless: Iterable<string>): void {
    const current = new Set(leaderless);
    for (const [feed, from] of this.since) {
      if (!current.has(feed)) {
        this.longest = Math.max(this.longest, nowMs - from);
        this.since.delete(feed);
      }
    }
    for (const feed of current) if (!this.since.has(feed)) this.since.set(feed, nowMs);
  }

  /** The longest leaderless stretch (ms), the ones still open at `nowMs` included. */
  longestMs(nowMs: number): number {
    let longest = this.longest;
    for (const from of this.since.values()) longest = Math.max(longest, nowMs - from);
    return longest;
  }
}
