/** Failed sign-ins allowed per key (an IP address, a role name) within the window. */
export interface RateLimitRule {
  max: number;
  windowMs: number;
}

/** The default: 10 failed sign-ins per 15 minutes per IP address and per role. */
export const SIGN_IN_LIMIT: RateLimitRule = { max: 10, windowMs: 15 * 60_000 };

/** Failure times still inside the window at `now`. Pure. */
export function attemptsInWindow(times: readonly number[], now: number, rule: RateLimitRule): number[] {
  return times.filter((t) => now - t < rule.windowMs);
}

/**
 * Counts failed sign-ins per key in memory; a key at its limit is refused before any password is
 * tried. The map is bounded (the oldest key leaves first) so a flood of addresses cannot grow it.
 */
export class AttemptLimiter {
  readonly #failures = new Map<string, number[]>();

  constructor(
    private readonly rule: RateLimitRule,
    private readonly now: () => number,
    private readonly maxKeys = 10_000,
  ) {}

  /** Whether a sign-in may be tried: no key is at its limit of failures within the window. */
  allow(keys: readonly string[]): boolean {
    const now = this.now();
    return keys.every((key) => attemptsInWindow(this.#failures.get(key) ?? [], now, this.rule).length < this.rule.max);
  }

  /** Records a failed sign-in against every key. */
  fail(keys: readonly string[]): void {
    const now = this.now();
    for (const key of keys) {
      const current = attemptsInWindow(this.#failures.get(key) ?? [], now, this.rule);
      this.#failures.delete(key);
      this.#failures.set(key, [...current, now]);
    }
    while (this.#failures.size > this.maxKeys) {
      const oldest = this.#failures.keys().next().value;
      if (oldest === undefined) break;
      this.#failures.delete(oldest);
    }
  }

  /** Forgets a role's failures after it signed in. */
  reset(key: string): void {
    this.#failures.delete(key);
  }
}
