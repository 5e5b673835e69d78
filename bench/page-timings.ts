/** Where one page's wall time went, in ms, as the drain worker measures it. */
export interface PageTiming {
  events: number;
  /** GET /events: HTTP, body parse and page-shape check (overlaps the previous page's apply) */
  fetch: number;
  /** the part of `fetch` the loop actually waited for after the previous page committed */
  fetch_wait: number;
  /** parse + validate + serialise the rows (in the prefetch: overlaps the previous page's apply) */
  prepare: number;
  /** the part of prepare on the critical path: 0 when the page was prepared while the previous one committed */
  validate: number;
  /** the page statement: checkpoint compare-and-set, match, events, statuses, quarantine */
  write: number;
  commit: number;
  /** validate + write + commit */
  apply: number;
}

export const TIMING_PARTS = ['fetch', 'fetch_wait', 'prepare', 'validate', 'write', 'commit', 'apply'] as const;
