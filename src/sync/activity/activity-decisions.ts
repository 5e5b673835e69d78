import { QUARANTINE_REASONS as REASONS } from '../../store-api/triage/vocabulary.js';
import type { QuarantineCounts } from '../state/worker-snapshot.js';

// What the daemon says about its own activity, decided here as pure steps (`now` passed in);
// activity-log.ts only feeds them the worker state's events and writes the lines.

/** Quarantined events summed over some pages. */
export interface QuarantineTally {
  counts: QuarantineCounts;
  events: number;
  pages: number;
}

const emptyCounts = (): QuarantineCounts => ({ malformed: 0, unmatched: 0, ambiguous: 0, unsupported_version: 0 });
const total = (counts: QuarantineCounts): number => REASONS.reduce((sum, reason) => sum + counts[reason], 0);

/**
 * One warning per page that quarantined events, or, while pages come faster than `intervalMs`, one per
 * interval summing the pages since the last warning (a 100k drain that quarantines everything says so a
 * few times a minute, not 400 times). The first page with findings warns at once; what accumulated
 * inside an interval is returned by flush() when the feed goes quiet (caught up), so nothing is lost.
 */
export class QuarantineWarnings {
  private pending: QuarantineTally = { counts: emptyCounts(), events: 0, pages: 0 };
  private lastWarnedAt: number | undefined;

  constructor(private readonly intervalMs: number) {}

  /** A page's counts; returns the tally to warn about now, if any. */
  page(counts: QuarantineCounts, now: number): QuarantineTally | undefined {
    const events = total(counts);
    if (events === 0) return undefined;
    for (const reason of REASONS) this.pending.counts[reason] += counts[reason];
    this.pending.events += events;
    this.pending.pages += 1;
    if (this.lastWarnedAt !== undefined && now - this.lastWarnedAt < this.intervalMs) return undefined;
    this.lastWarnedAt = now;
    return this.take();
  }

  /** What accumulated and was not warned about yet (undefined: nothing). */
  flush(): QuarantineTally | undefined {
    return this.pending.events > 0 ? this.take() : undefined;
  }

  private take(): QuarantineTally {
    const tally = this.pending;
    this.pending = { counts: emptyCounts(), events: 0, pages: 0 };
    return tally;
  }
}

/** The reasons with a non-zero count, for the log line (`{ unmatched: 250 }`). */
export function nonZeroReasons(counts: QuarantineCounts): Partial<QuarantineCounts> {
  return Object.fromEntries(REASONS.filter((r) => counts[r] > 0).map((r) => [r, counts[r]]));
}

/** A backlog drained: how many events and how long, from its first page to the page that said done. */
export interface CatchUp {
  events: number;
  pages: number;
  ms: number;
}

/**
 * Notices a feed catching up after a backlog: a backlog starts at a page that says the feed is not done
 * and ends at the first page (or empty poll) that says it is. A feed that is always caught up (one page
 * at a time) never had a backlog and says nothing.
 */
export class BacklogTracker {
  private backlog: { since: number; events: number; pages: number } | undefined;

  /** An applied page; returns the catch-up when this page ended a backlog. */
  page(page: { received: number; done: boolean }, startedAt: number, now: number): CatchUp | undefined {
    if (!page.done) {
      this.backlog ??= { since: startedAt, events: 0, pages: 0 };
      this.backlog.events += page.received;
      this.backlog.pages += 1;
      return undefined;
    }
    if (!this.backlog) return undefined;
    const { since, events, pages } = this.backlog;
    this.backlog = undefined;
    return { events: events + page.received, pages: pages + 1, ms: Math.max(0, now - since) };
  }

  /** An empty poll: done ends a backlog whose last page was full; not done changes nothing. */
  emptyPoll(done: boolean, now: number): CatchUp | undefined {
    if (!done || !this.backlog) return undefined;
    const { since, events, pages } = this.backlog;
    this.backlog = undefined;
    return { events, pages, ms: Math.max(0, now - since) };
  }

  /** Leadership lost or regained: a backlog of another term is not this one's. */
  reset(): void {
    this.backlog = undefined;
  }
}

/** A stored position as this worker last knew it. */
export interface KnownPosition {
  iterator: string | null;
  version: number;
}

/**
 * Whether a checkpoint read shows that someone else moved the position this worker holds: every move
 * of ours (a page commit) updates `known`, so a loaded version other than the known one is a reset,
 * a resync or another worker. Nothing known yet (the term's first read) is not a move.
 */
export function movedByOther(known: KnownPosition | undefined, loaded: KnownPosition): boolean {
  return known !== undefined && loaded.version !== known.version;
}
