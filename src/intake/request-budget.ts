/** What a request waits on before it goes out: a share of its operator host's budget. */
export interface RequestBudget {
  /** Resolves when the request may be sent; rejects with the signal's reason when it aborts first. */
  acquire(signal?: AbortSignal): Promise<void>;
}

/** The window the cap is counted over: never more than the rate in any window this long. */
export const CAP_WINDOW_MS = 1_000;
/** How far behind its schedule the pacing may fall and catch up at once (a late timer, a quiet spell). */
export const CATCH_UP_MS = 100;

/**
 * Pure: ms until the next request may go out at `nowMs`, 0 for at once. Two rules: the pacing slot
 * (`nextSlotMs`, one slot every 1000 / rate ms) and the hard cap: `oldestOfLastRate`, the time of the
 * rate-th most recent grant (undefined while fewer were granted), must have left the window.
 */
export function grantWait(nowMs: number, nextSlotMs: number, oldestOfLastRate: number | undefined): number {
  const capFreeAt = oldestOfLastRate === undefined ? nowMs : oldestOfLastRate + CAP_WINDOW_MS;
  return Math.max(0, nextSlotMs - nowMs, capFreeAt - nowMs);
}

/** Pure: the pacing slot after a grant at `nowMs`: one spacing on, never more than CATCH_UP_MS of missed slots owed. */
export function slotAfterGrant(nowMs: number, nextSlotMs: number, spacingMs: number): number {
  return Math.max(nextSlotMs, nowMs - CATCH_UP_MS) + spacingMs;
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
 * it: requests go out paced one every 1000 / rate ms, and never more than `rate` in any one-second
 * window, however late a timer fires (a token bucket would let two seconds' worth through in one:
 * its full bucket, then its refill). Grants are handed out round robin among the accounts with a
 * request waiting. A 429's Retry-After is not taken here: it slows the account that got it (its own
 * client's retry wait), never the others.
 */
export class HostRequestBudget {
  private readonly spacingMs: number;
  private nextSlot: number;
  /** the last `rate` grant times, a ring: `granted` of them so far, the oldest at `head` once full */
  private readonly recent: Float64Array;
  private granted = 0;
  private head = 0;
  private readonly queues = new Map<string, Waiter[]>();
  private lastServed: string | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly ratePerSecond: number,
    private readonly clock: { now(): number } = { now: () => Date.now() },
  ) {
    if (!(ratePerSecond >= 1) || !Number.isInteger(ratePerSecond))
      throw new Error('a request budget needs a whole rate of at least 1 per second');
    this.spacingMs = CAP_WINDOW_MS / ratePerSecond;
    this.nextSlot = clock.now();
    this.recent = new Float64Array(ratePerSecond);
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

  private oldestOfLastRate(): number | undefined {
    return this.granted < this.ratePerSecond ? undefined : this.recent[this.head];
  }

  private record(nowMs: number): void {
    this.recent[this.head] = nowMs;
    this.head = (this.head + 1) % this.ratePerSecond;
    this.granted = Math.min(this.granted + 1, this.ratePerSecond);
  }

  private dispense(): void {
    const order = [...this.queues.keys()];
    let wait = 0;
    while (this.waiting() > 0) {
      const now = this.clock.now();
      wait = grantWait(now, this.nextSlot, this.oldestOfLastRate());
      if (wait > 0) break;
      const waitingAccounts = order.filter((a) => (this.queues.get(a)?.length ?? 0) > 0);
      const account = nextAccount(waitingAccounts, order, this.lastServed);
      const waiter = account === undefined ? undefined : this.queues.get(account)?.shift();
      if (!waiter) return;
      this.record(now);
      this.nextSlot = slotAfterGrant(now, this.nextSlot, this.spacingMs);
      this.lastServed = account;
      if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener('abort', waiter.onAbort);
      waiter.resolve();
    }
    if (this.waiting() > 0 && this.timer === undefined) {
      // the timer keeps nothing alive (a stopping process aborts its waiters)
      this.timer = setTimeout(
        () => {
          this.timer = undefined;
          this.dispense();
        },
        Math.max(1, Math.ceil(wait)),
      );
      this.timer.unref?.();
    }
  }
}
