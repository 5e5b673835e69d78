/**
 * The statistics passes of one process's feed leaders, one at a time and at most one per interval.
 * The tables a pass analyzes are the schema's, not a feed's: every leader's keeper would otherwise
 * run its own pass, and at 500 feeds taken together those passes came due together, each found the
 * tables a drain was changing due, and each queued an ANALYZE of them. ANALYZE takes a lock that
 * conflicts with itself, so the queued ones held every connection of the pool waiting, and the feeds
 * stopped polling for as long as the queue lasted (docs/performance.md, "500 feeds over replicas").
 * One pass of the process serves all its leaders; another replica's pass may run beside it.
 */
export class SharedStatisticsPasses {
  private running = false;
  /** when the last pass that succeeded ended; a failed one leaves the next leader free to try */
  private lastEndedAt: number | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly clock: { now(): number },
  ) {}

  /** Runs `pass` unless one of this process runs now or one ended less than the interval ago; undefined when skipped. */
  async run<T>(pass: () => Promise<T>): Promise<T | undefined> {
    if (this.running) return undefined;
    if (this.lastEndedAt !== undefined && this.clock.now() - this.lastEndedAt < this.intervalMs) return undefined;
    this.running = true;
    try {
      const result = await pass();
      this.lastEndedAt = this.clock.now();
      return result;
    } finally {
      this.running = false;
    }
  }
}
