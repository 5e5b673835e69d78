/** The sign-in limits (docs/console.md#sign-in-limits). */
export interface SignInLimits {
  /** attempts (failed or in flight) per client address (IPv6: per /64) within the window */
  perAddress: number;
  windowMs: number;
  /** failed attempts on one role within the window, from any address, that make it an attacked role */
  attackedRole: number;
  /** on an attacked role, an address that failed on it waits this long after its first failure, doubling per failure */
  backoffMs: number;
  backoffMaxMs: number;
}

/** The default: 10 attempts per address per 15 minutes; a role with 10 failures is attacked; backoff 1 s to 5 min. */
export const SIGN_IN_LIMITS: SignInLimits = {
  perAddress: 10,
  windowMs: 15 * 60_000,
  attackedRole: 10,
  backoffMs: 1_000,
  backoffMaxMs: 5 * 60_000,
};

/** Why an attempt was not tried, and when it may be. */
export interface Limited {
  limited: 'address' | 'role';
  retryAfterMs: number;
}

/** An attempt that may be tried: report how it went, once. */
export interface Ticket {
  succeeded(): void;
  failed(): void;
}

/** Times still inside the window at `now`. Pure. */
export function attemptsInWindow(times: readonly number[], now: number, windowMs: number): number[] {
  return times.filter((t) => now - t < windowMs);
}

/** How long an address with `failures` failures on an attacked role waits after its last one. Pure. */
export function backoffAfter(failures: number, limits: SignInLimits): number {
  if (failures <= 0) return 0;
  return Math.min(limits.backoffMs * 2 ** Math.min(failures - 1, 30), limits.backoffMaxMs);
}

interface RoleAttempts {
  failures: number[];
  inFlight: number;
}

interface AddressState {
  /** failure times */
  failures: number[];
  inFlight: number;
  /** per role: this address's failure times on it, and whether an attempt on it is in flight */
  roles: Map<string, RoleAttempts>;
}

/**
 * Sign-in attempts in memory. An attempt is reserved before the password is tried, so attempts in
 * flight count: a burst of N parallel guesses from one address tries at most `perAddress`. A role
 * that many addresses fail on is slowed for the addresses that failed on it (one attempt at a time,
 * with a doubling wait), never locked: an address that has not failed still signs in at once.
 * Both maps are bounded (the oldest key leaves first).
 */
export class SignInLimiter {
  readonly #addresses = new Map<string, AddressState>();
  readonly #roleFailures = new Map<string, number[]>();

  constructor(
    private readonly limits: SignInLimits,
    private readonly now: () => number,
    private readonly maxKeys = 10_000,
  ) {}

  /** Reserves an attempt of `role` from the address key, or says why not (nothing is recorded then). */
  reserve(address: string, role: string): Ticket | Limited {
    const now = this.now();
    const { windowMs } = this.limits;
    const state: AddressState = this.#addresses.get(address) ?? { failures: [], inFlight: 0, roles: new Map() };
    state.failures = attemptsInWindow(state.failures, now, windowMs);
    if (state.failures.length + state.inFlight >= this.limits.perAddress) {
      const oldest = state.failures[0];
      return { limited: 'address', retryAfterMs: oldest === undefined ? 1_000 : oldest + windowMs - now };
    }
    const onRole: RoleAttempts = state.roles.get(role) ?? { failures: [], inFlight: 0 };
    onRole.failures = attemptsInWindow(onRole.failures, now, windowMs);
    const roleFailures = attemptsInWindow(this.#roleFailures.get(role) ?? [], now, windowMs);
    if (roleFailures.length >= this.limits.attackedRole && onRole.failures.length > 0) {
      const last = onRole.failures[onRole.failures.length - 1] ?? now;
      const wait = last + backoffAfter(onRole.failures.length, this.limits) - now;
      if (onRole.inFlight > 0 || wait > 0) return { limited: 'role', retryAfterMs: Math.max(wait, 1_000) };
    }
    state.inFlight++;
    onRole.inFlight++;
    state.roles.delete(role);
    state.roles.set(role, onRole);
    // an address holds at most perAddress attempts per window, so few roles matter; forget the oldest
    while (state.roles.size > 2 * this.limits.perAddress) {
      const oldest = state.roles.keys().next().value;
      if (oldest === undefined) break;
      state.roles.delete(oldest);
    }
    this.#touch(this.#addresses, address, state);
    let done = false;
    const finish = (failed: boolean) => {
      if (done) return;
      done = true;
      state.inFlight--;
      onRole.inFlight--;
      if (!failed) return;
      const at = this.now();
      state.failures.push(at);
      onRole.failures.push(at);
      this.#touch(this.#roleFailures, role, [...attemptsInWindow(this.#roleFailures.get(role) ?? [], at, windowMs), at]);
    };
    return { succeeded: () => finish(false), failed: () => finish(true) };
  }

  #touch<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key);
    map.set(key, value);
    while (map.size > this.maxKeys) {
      const oldest = map.keys().next().value;
      if (oldest === undefined) break;
      map.delete(oldest);
    }
  }
}
