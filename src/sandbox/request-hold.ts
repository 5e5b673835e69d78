import type { ServerResponse } from 'node:http';

/**
 * Which request to hold: the `nth` (1-based, counted from when the hold is set) /intake_api request
 * with this method to this resource (and version, when given). `before`: held before the operator
 * applies it; `after`: applied, its answer held. Tests use it to stop a client at a known point
 * (e.g. kill a process while its POST is in flight) without sleeping.
 */
export interface HoldRule {
  method: string;
  resource: string;
  version?: string;
  nth: number;
  phase: 'before' | 'after';
}

/** A hold set on the simulator. */
export interface RequestHold {
  /** resolves once the request is held (phase after: the operator has applied it) */
  reached: Promise<void>;
  /** lets the request go on (its client may be gone: then nothing is answered) */
  release(): void;
  /**
   * phase before: the operator never sees it (the route does not run, the socket is closed), so a
   * test that killed its client knows it was not applied later, once released
   */
  drop(): void;
}

interface Entry {
  rule: HoldRule;
  seen: number;
  reach: () => void;
  release: () => void;
  released: Promise<void>;
  dropped: boolean;
  hold: RequestHold;
}

/** The holds set on one simulator, checked once per API request. */
export class RequestHolds {
  private readonly entries = new Set<Entry>();

  add(rule: HoldRule): RequestHold {
    let reach = () => {};
    let release = () => {};
    const reached = new Promise<void>((resolve) => (reach = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const entry: Entry = {
      rule,
      seen: 0,
      reach,
      release,
      released,
      dropped: false,
      hold: {
        reached,
        release: () => release(),
        drop: () => {
          entry.dropped = true;
          release();
        },
      },
    };
    this.entries.add(entry);
    return entry.hold;
  }

  /**
   * Counts the request against every hold; for the one it is the nth of, waits (before) or defers
   * the answer (after: `res.end` waits for the release). Resolves true when the route may run, false
   * when a held request was dropped (its socket is closed).
   */
  async gate(method: string, version: string, resource: string, res: ServerResponse): Promise<boolean> {
    for (const entry of this.entries) {
      const { rule } = entry;
      if (rule.method !== method || rule.resource !== resource || (rule.version !== undefined && rule.version !== version)) continue;
      if (++entry.seen !== rule.nth) continue;
      this.entries.delete(entry);
      if (rule.phase === 'before') {
        entry.reach();
        await entry.released;
        if (entry.dropped) {
          res.destroy();
          return false;
        }
        continue;
      }
      const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
      (res as { end: (...args: unknown[]) => ServerResponse }).end = (...args: unknown[]) => {
        entry.reach();
        void entry.released.then(() => end(...args));
        return res;
      };
    }
    return true;
  }

  /** The simulator closes: every hold lets go. */
  releaseAll(): void {
    for (const entry of this.entries) entry.release();
    this.entries.clear();
  }
}
