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

/**
 * How many leases a replica above its share gives up: the whole excess at once (a joined replica
 * then gets its share within one lease check, not one feed per check). The share only shrinks when
 * members join, so replicas still converge without flapping.
 */
export function leasesToYield(held: number, feeds: number, members: number): number {
  return Math.max(0, held - leaseShare(feeds, members));
}
