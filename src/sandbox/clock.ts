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

/**
 * Pure: what a time scale means for someone watching, said at start (the demo's SANDBOX line,
 * `intake-sync sandbox`): how long a 5-minute lifecycle step takes, and that the simulator's
 * `occurred_at` times run ahead of the wall clock (by (scale - 1) x the time it has run).
 */
export function describeTimeScale(scale: number): string {
  if (scale === 1) return 'simulator time runs at the wall clock';
  const step = (5 * 60) / scale;
  const stepText = step >= 1 ? `${Number(step.toFixed(1))} s` : `${Math.round(step * 1000)} ms`;
  return (
    `simulator time runs ${scale}x the wall clock: a 5-minute lifecycle step takes ${stepText}, and its events' ` +
    `occurred_at run ahead of real time (an hour of running puts them ${scale - 1} hours ahead)`
  );
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
