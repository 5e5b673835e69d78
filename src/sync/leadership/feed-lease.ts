/** The right to consume one feed: at most one process holds it. */
export interface FeedLease {
  /** Takes the lease if free; false when another process holds it. Throws when the DB is unreachable. */
  tryAcquire(): Promise<boolean>;
  /** Whether this process still holds it (false after the lock's connection died). Never throws. */
  stillHeld(): Promise<boolean>;
  /** Gives it up; safe to call when not held or when the connection is gone. */
  release(): Promise<void>;
  /**
   * ms until the next lease check common to every feed of this lease's lock session, when checks
   * come every `everyMs` (lease-check-tick.ts). A lease without it (one feed on a session of its own):
   * its worker waits `everyMs` from its own last call.
   */
  untilNextCheck?(everyMs: number): number;
}
