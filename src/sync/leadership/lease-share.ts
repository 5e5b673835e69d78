/**
 * How many feed leases one replica may hold: its fair share of the feeds among the replicas that
 * are members right now (each holds the shared membership lock). Never below one, so a lone
 * replica takes every feed and a replica that just joined can take one at once.
 */
export function leaseShare(feeds: number, members: number): number {
  return Math.max(1, Math.ceil(feeds / Math.max(1, members)));
}

/** What a replica holding `held` leases does about one more: take it only below its share. */
export function mayTakeLease(held: number, feeds: number, members: number): boolean {
  return held < leaseShare(feeds, members);
}

/** Whether a replica holds more than its share and gives one lease up (one per check, so replicas converge without flapping). */
export function mustYieldLease(held: number, feeds: number, members: number): boolean {
  return held > leaseShare(feeds, members);
}
