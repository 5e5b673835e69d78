/** What a request waits on before it goes out: a share of its operator host's budget. */
export interface RequestBudget {
  /** Resolves when the request may be sent; rejects with the signal's reason when it aborts first. */
  acquire(signal?: AbortSignal): Promise<void>;
}

/** Pure: the tokens of a bucket of `ratePerSecond` (holding at most one second's worth) after `elapsedMs`. */
export function refill(tokens: number, elapsedMs: number, ratePerSecond: number): number {
  return Math.min(Math.max(1, ratePerSecond), tokens + (Math.max(0, elapsedMs) * ratePerSecond) / 1000);
}

/**
 * Pure: whose request goes next among the accounts with one waiting, round robin from the account
 * after the one served last, so a backlogged feed sending back to back gets its turn like every
 * other and never more than its share while others wait.
 */
export function nextAccount(waiting: readonly string[], order: readonly string[], lastServed: string | undefined): string | undefined {
  if (waiting.length === 0) return undefined;
  const start = lastServed === undefined ? 0 : order.indexOf(lastServed) + 1;
  for (let i = 0; i < order.length; i++) {
    const account = order[(start + i) % order.length];
    if (account !== undefined && waiting.includes(account)) return account;
  }
  return waiting[0];
}

interface Waiter {
  resolve(): void;
  reject(reason: unknown): void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/**
 * OPERATOR_MAX_RPS for one operator host, shared by every account (feed) of the process that calls
 * it: a token bucket of that many requests per second (one second of burst), handed out round robin
 * among the accounts with a request waiting. A 429's Retry-After is not taken here: it slows the
 * account that got it (its own client's retry wait), never the others.
 */
export class HostRequestBudget {
  private tokens: number;
  private refilledAt: number;
  private readonly queues = new Map<string, Waiter[]>();
  private lastServed: string | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly ratePerSecond: number,
    private readonly clock: { now(): number } = { now: () => Date.now() },
  ) {
    if (!(ratePerSecond > 0)) throw new Error('a request budget needs a positive rate');
    this.tokens = Math.max(1, ratePerSecond);
    this.refilledAt = clock.now();
  }

  /** The budget as one account's requests see it. */
  forAccount(account: string): RequestBudget {
    if (!this.queues.has(account)) this.queues.set(account, []);
    return { acquire: (signal) => this.acquire(account, signal) };
  }

  /** Requests waiting now, all accounts together (for tests and metrics). */
  waiting(): number {
    let n = 0;
    for (const queue of this.queues.values()) n += queue.length;
    return n;
  }

  private acquire(account: string, signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal, onAbort: undefined };
      if (signal) {
        waiter.onAbort = () => {
          const queue = this.queues.get(account) ?? [];
          const index = queue.indexOf(waiter);
          if (index >= 0) queue.splice(index, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.queues.get(account)?.push(waiter);
      this.dispense();
    });
  }

  private dispense(): void {
    const now = this.clock.now();
    this.tokens = refill(this.tokens, now - this.refilledAt, this.ratePerSecond);
    this.refilledAt = now;
    const order = [...this.queues.keys()];
    while (this.tokens >= 1) {
      const waiting = order.filter((a) => (this.queues.get(a)?.length ?? 0) > 0);
      const account = nextAccount(waiting, order, this.lastServed);
      if (account === undefined) return;
      const waiter = this.queues.get(account)?.shift();
      if (!waiter) return;
      this.tokens -= 1;
      this.lastServed = account;
      if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener('abort', waiter.onAbort);
      waiter.resolve();
    }
    if (this.waiting() > 0 && this.timer === undefined) {
      // the next token's time; the timer keeps nothing alive (a stopping process aborts its waiters)
      const waitMs = Math.ceil(((1 - this.tokens) * 1000) / this.ratePerSecond);
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.dispense();
      }, waitMs);
      this.timer.unref?.();
    }
  }
}
