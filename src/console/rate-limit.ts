/** Sign-in attempts allowed per key (an IP address, a role name) within the window. */
export interface RateLimitRule {
  max: number;
  windowMs: number;
}

/** The default: 10 attempts per 15 minutes per IP address and per role. */
export const SIGN_IN_LIMIT: RateLimitRule = { max: 10, windowMs: 15 * 60_000 };

/** Attempt times still inside the window at `now`. Pure. */
export function attemptsInWindow(times: readonly number[], now: number, rule: RateLimitRule): number[] {
  return times.filter((t) => now - t < rule.windowMs);
}

/**
 * Counts sign-in attempts per key in memory and refuses one past the limit; the map is bounded
 * (the oldest key leaves first) so a flood of addresses cannot grow it without end.
 */
export class AttemptLimiter {
  readonly #attempts = new Map<string, number[]>();

  constructor(
    private readonly rule: RateLimitRule,
    private readonly now: () => number,
    private readonly maxKeys = 10_000,
  ) {}

  /** Records an attempt for every key; false (and nothing recorded) when any key is over its limit. */
  allow(keys: readonly string[]): boolean {
    const now = this.now();
    const current = keys.map((key) => attemptsInWindow(this.#attempts.get(key) ?? [], now, this.rule));
    if (current.some((times) => times.length >= this.rule.max)) return false;
    keys.forEach((key, i) => {
      this.#attempts.delete(key);
      this.#attempts.set(key, [...(current[i] ?? []), now]);
    });
    while (this.#attempts.size > this.maxKeys) {
      const oldest = this.#attempts.keys().next().value;
      if (oldest === undefined) break;
      this.#attempts.delete(oldest);
    }
    return true;
  }

  /** Forgets a role's attempts after it signed in. */
  reset(key: string): void {
    this.#attempts.delete(key);
  }
}
