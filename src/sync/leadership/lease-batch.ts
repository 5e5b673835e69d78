/** What one lease round does: the feeds whose release, lease check and take were asked for. */
export interface LeaseRound {
  releases: string[];
  checks: string[];
  takes: string[];
}

/** What one lease round found: the checked feeds still held, and the feeds taken (or why taking failed). */
export interface LeaseRoundResult {
  held: ReadonlySet<string>;
  taken: ReadonlySet<string> | Error;
}

type Kind = keyof LeaseRound;

interface Call {
  kind: Kind;
  feed: string;
  answer(result: LeaseRoundResult | Error): void;
}

export interface LeaseCallsOptions {
  /** runs one round; its statements serve every call of the round (lease-session.ts) */
  run(round: LeaseRound): Promise<LeaseRoundResult>;
  /**
   * Resolves when the calls that arrive together have had time to arrive: workers that check
   * their leases at nearly the same moment then share one round. Calls that arrive while a
   * round runs wait for the next one without it.
   */
  gather(): Promise<void>;
  /** the most feeds one round names per kind (a statement's bound: MAX_FEEDS_PER_STATEMENT); the rest go in the next round */
  maxFeedsPerKind: number;
}

/**
 * The feed workers' lease calls, coalesced: calls that arrive together, or while a round is in
 * flight, are answered by the same round, so the statements per lease check do not grow with the
 * number of feeds (issue 36). At most one round runs at a time.
 *
 * Per feed the calls keep their order: a round takes one kind of call per feed (a release asked
 * after a take waits for the next round, and the other way round), as the serial queue did.
 */
export class LeaseCalls {
  private queue: Call[] = [];
  private pumping = false;

  constructor(private readonly options: LeaseCallsOptions) {}

  /** true when taken or already held; rejects when the database could not be asked */
  tryAcquire(feed: string): Promise<boolean> {
    return this.add('takes', feed, (result) => {
      if (result instanceof Error) throw result;
      if (result.held.has(feed)) return true;
      if (result.taken instanceof Error) throw result.taken;
      return result.taken.has(feed);
    });
  }

  /** never rejects: a failed round means the lease is lost */
  stillHeld(feed: string): Promise<boolean> {
    return this.add('checks', feed, (result) => !(result instanceof Error) && result.held.has(feed));
  }

  /** never rejects: a failed release leaves the lease to its session's end */
  release(feed: string): Promise<void> {
    return this.add('releases', feed, () => undefined);
  }

  private add<T>(kind: Kind, feed: string, decide: (result: LeaseRoundResult | Error) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        kind,
        feed,
        answer: (result) => {
          try {
            resolve(decide(result));
          } catch (error) {
            reject(error);
          }
        },
      });
      this.start();
    });
  }

  private start(): void {
    if (this.pumping) return;
    this.pumping = true;
    void (async () => {
      try {
        // a failed wait only means the round goes now
        await this.options.gather().catch(() => {});
        while (this.queue.length > 0) await this.runOne();
      } finally {
        this.pumping = false;
      }
      // a call may have come after the last round and before pumping was cleared
      if (this.queue.length > 0) this.start();
    })();
  }

  private async runOne(): Promise<void> {
    const { round, calls, rest } = nextRound(this.queue, this.options.maxFeedsPerKind);
    this.queue = rest;
    let result: LeaseRoundResult | Error;
    try {
      result = await this.options.run(round);
    } catch (error) {
      result = error instanceof Error ? error : new Error(String(error));
    }
    for (const call of calls) call.answer(result);
  }
}

/**
 * Pure: the calls the next round answers, in arrival order, and the ones left for later: a feed's
 * calls join the round up to the first call of another kind for that feed, and a round names at
 * most `maxFeedsPerKind` feeds of each kind.
 */
export function nextRound<C extends { kind: Kind; feed: string }>(
  queue: readonly C[],
  maxFeedsPerKind: number,
): { round: LeaseRound; calls: C[]; rest: C[] } {
  const round: LeaseRound = { releases: [], checks: [], takes: [] };
  const kindOf = new Map<string, Kind>();
  const closed = new Set<string>();
  const calls: C[] = [];
  const rest: C[] = [];
  for (const call of queue) {
    const kind = kindOf.get(call.feed);
    const full = kind === undefined && round[call.kind].length >= maxFeedsPerKind;
    if (closed.has(call.feed) || (kind !== undefined && kind !== call.kind) || full) {
      closed.add(call.feed);
      rest.push(call);
      continue;
    }
    if (kind === undefined) {
      kindOf.set(call.feed, call.kind);
      round[call.kind].push(call.feed);
    }
    calls.push(call);
  }
  return { round, calls, rest };
}
