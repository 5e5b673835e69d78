/** A source of the current time in epoch milliseconds; the sandbox schedules every event on one. */
export interface Clock {
  now(): number;
}

/** Real wall-clock time. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock that starts at `startMs` (default: now) and runs `scale` times faster than real time. */
export function scaledClock(scale: number, startMs: number = Date.now()): Clock {
  if (!Number.isFinite(scale) || scale <= 0) throw new RangeError(`time scale must be a positive number, got ${scale}`);
  const realStart = Date.now();
  return { now: () => Math.floor(startMs + (Date.now() - realStart) * scale) };
}

/** A clock that only moves when told to: tests drive the sandbox schedule with it. */
export class ManualClock implements Clock {
  private current: number;

  constructor(startMs: number = Date.UTC(2025, 0, 1, 12, 0, 0)) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`cannot advance a clock by ${ms} ms`);
    this.current += ms;
  }

  set(ms: number): void {
    if (!Number.isFinite(ms)) throw new RangeError(`cannot set a clock to ${ms}`);
    this.current = ms;
  }
}
