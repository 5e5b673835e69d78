/** The right to consume one feed: at most one process holds it. */
export interface FeedLease {
  /** Takes the lease if free; false when another process holds it. Throws when the DB is unreachable. */
  tryAcquire(): Promise<boolean>;
  /** Whether this process still holds it (false after the lock's connection died). Never throws. */
  stillHeld(): Promise<boolean>;
  /** Gives it up; safe to call when not held or when the connection is gone. */
  release(): Promise<void>;
}
