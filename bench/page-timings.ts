/** Where one page's wall time went, in ms, as the drain worker measures it. */
export interface PageTiming {
  events: number;
  /** GET /events: HTTP, body parse and page-shape check (overlaps the previous page's apply) */
  fetch: number;
  /** the part of `fetch` the loop actually waited for after the previous page committed */
  fetch_wait: number;
  validate: number;
  match: number;
  write: number;
  commit: number;
  /** applyPage() wall time: validate + match + write + commit + transaction overhead */
  apply: number;
}

export const TIMING_PARTS = ['fetch', 'fetch_wait', 'validate', 'match', 'write', 'commit', 'apply'] as const;
