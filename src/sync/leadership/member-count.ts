import { mayTakeLease } from './lease-share.js';

/**
 * The replicas a lease session last counted (each check and take statement counts them), and when:
 * whether this replica holds its share is then known without a statement. Without it the standby
 * workers of a replica at its share asked every LEASE_RETRY_MS, each feed on its own phase, too far
 * apart to share a round: 77-83 take statements a second on two of four idle replicas at 500 feeds
 * (docs/performance.md). The count stays fresh through the leaders' checks, which every replica at
 * its share sends (it leads at least one feed); a member that dies raises the share at the next
 * check, so a dead replica's feeds are still taken within one lease check. A count older than
 * `maxAgeMs`, or none, answers "not at its share": the take is sent.
 */
export class MemberCount {
  private counted: { members: number; atMs: number } | undefined;

  constructor(
    private readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** what a statement counted (a bad value is ignored) */
  record(members: number): void {
    if (Number.isInteger(members) && members >= 1) this.counted = { members, atMs: this.now() };
  }

  /** the session is gone: its count with it */
  forget(): void {
    this.counted = undefined;
  }

  /** true when a fresh count says a replica holding `held` of `feeds` may take no more */
  atShare(held: number, feeds: number): boolean {
    const counted = this.counted;
    if (counted === undefined || this.now() - counted.atMs > this.maxAgeMs) return false;
    return !mayTakeLease(held, feeds, counted.members);
  }
}
