/**
 * CONSOLE_MAX_CONNECTIONS as slots: each session holds one backend (its pool has one socket) from
 * sign-in to its end, and a sign-in holds one while the password is tried. No wait queue: a full
 * budget refuses at once, so a flood of sign-ins cannot pile up backends or requests.
 */
export class ConnectionBudget {
  #used = 0;

  constructor(readonly max: number) {}

  /** Takes a slot, or false when all are used. */
  tryAcquire(): boolean {
    if (this.#used >= this.max) return false;
    this.#used++;
    return true;
  }

  release(): void {
    if (this.#used > 0) this.#used--;
  }

  get used(): number {
    return this.#used;
  }
}
