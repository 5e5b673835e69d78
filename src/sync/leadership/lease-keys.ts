/**
 * First half of the advisory lock key of a feed lease: constant for this application ("inta"),
 * so our locks never collide with another application's single-key locks.
 * The second half is hashtext('intake-sync:' || schema || ':' || feed).
 */
export const LEASE_NAMESPACE = 0x696e7461;

/**
 * First half of the membership lock ("intm"): every replica's lock session holds it in SHARED
 * mode on hashtext('intake-sync:' || schema || ':members'), so counting its holders in pg_locks
 * counts the live replicas of a deployment.
 */
export const MEMBERS_NAMESPACE = 0x696e746d;

/** Per schema and feed: two deployments in one database each have their own leader. */
export function leaseName(schema: string, feed: string): string {
  return `intake-sync:${schema}:${feed}`;
}

export function membersName(schema: string): string {
  return `intake-sync:${schema}:members`;
}
