import type { FetchedPage, PollerDeps } from './poll-loop.js';

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** A page request in flight or answered, not yet taken by the pass. */
export interface PendingFetch {
  iterator: string | null;
  startedAt: number;
  result: Promise<Settled<FetchedPage>>;
  /**
   * Resolves once the request is written to the socket, or has settled without being reported; undefined
   * when fetchPage does not report it (PollerDeps.fetchReportsSent)
   */
  sent: Promise<void> | undefined;
  /** aborts this request and the one chained after it */
  abort: AbortController;
  /** the request for the page after this one, sent as soon as this one arrived while the pass was busy */
  next?: PendingFetch;
}

/**
 * Pages requested and not yet taken by the pass, at most: the one the pass will apply next and the
 * one after it. A slow apply then never delays a request, and at most one page waits in memory.
 */
const MAX_PAGES_AHEAD = 2;

/**
 * The page requests of one feed's poll loop: page N+1 is requested while page N commits, and a page
 * that arrives while the pass is still applying an earlier one requests the page after it at once and
 * is validated (preparePage) in the apply's shadow. A page the pass is waiting for comes back
 * unprepared: the pass sends the next request first and applyPage validates it behind that request.
 */
export class PrefetchPipeline {
  /** true while the pass waits for a fetch: a page arriving then is left unprepared, so the next fetch starts first */
  private awaitingFetch = false;
  /** pages requested this pass and not yet taken by it (see MAX_PAGES_AHEAD) */
  private pagesAhead = 0;
  /** bumped at every pass: a request of an earlier pass, answering late, chains nothing */
  private passNumber = 0;

  constructor(private readonly deps: Pick<PollerDeps, 'fetchPage' | 'preparePage' | 'clock' | 'fetchReportsSent'>) {}

  /** Starts a pass's requests: whatever an earlier pass left in flight chains nothing more. */
  beginPass(): void {
    this.passNumber++;
    this.pagesAhead = 0;
  }

  /** Waits for a requested page; while it waits, the page is handed over unprepared (see the class). */
  async take(pending: PendingFetch): Promise<Settled<FetchedPage>> {
    this.awaitingFetch = true;
    const fetched = await pending.result;
    this.awaitingFetch = false;
    this.pagesAhead--;
    return fetched;
  }

  /** Requests the page at `iterator`; aborted with `parentSignal` or its own `abort`. Never rejects. */
  fetch(iterator: string | null, parentSignal: AbortSignal): PendingFetch {
    const abort = new AbortController();
    const signal = AbortSignal.any([parentSignal, abort.signal]);
    const pass = this.passNumber;
    this.pagesAhead++;
    const handle: PendingFetch = {
      iterator,
      startedAt: this.deps.clock.now(),
      abort,
      result: Promise.resolve({ ok: false, error: undefined }),
      sent: undefined,
    };
    const prepare = this.deps.preparePage;
    let markSent: (() => void) | undefined;
    if (this.deps.fetchReportsSent) handle.sent = new Promise<void>((resolve) => (markSent = resolve));
    const request = markSent ? { iterator, onSent: markSent } : { iterator };
    // settled at once so a prefetch that fails while a page commits is never an unhandled rejection
    handle.result = this.deps.fetchPage(request, signal).then(
      (value): Settled<FetchedPage> => {
        // the pass is waiting for this page: it sends the next request itself, then validates
        if (this.awaitingFetch) return { ok: true, value };
        // arriving while an earlier page is still being applied: request the one after at once, so a
        // slow apply never holds the next request back, then validate this one in the apply's shadow
        const more = !value.meta.done && value.meta.iterator !== iterator;
        if (more && !signal.aborted && pass === this.passNumber && this.pagesAhead < MAX_PAGES_AHEAD) {
          handle.next = this.fetch(value.meta.iterator, signal);
        }
        if (!prepare || value.prepared) return { ok: true, value };
        try {
          return { ok: true, value: { ...value, prepared: prepare(value.events) } };
        } catch {
          // applyPage validates it again and reports the failure where it belongs
          return { ok: true, value };
        }
      },
      (error: unknown): Settled<FetchedPage> => ({ ok: false, error }),
    );
    // a request that failed before it was written (or was never reported) is "sent" when it settles
    if (markSent) void handle.result.then(markSent);
    return handle;
  }
}
