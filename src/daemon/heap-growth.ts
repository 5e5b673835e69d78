import { setFlagsFromString } from 'node:v8';

/**
 * From this many feeds in one process, the old space may grow to only twice its live size before a full
 * collection (V8's own heuristic lets a fast-collecting heap reach about four times it).
 *
 * Why: every feed holds up to three pages (one waiting for the shared page connection, two requested
 * ahead), about 0.9 MB each once parsed and prepared, so the live set grows with the feed count while the
 * young generation (DAEMON_NODE_FLAGS) stays small. Measured on 200k-event drains (bench/many-feeds.ts): 20
 * feeds lived in about 50 MB and V8 let the heap reach 180 MB between full collections, peak RSS 268-309 MB;
 * capped at twice, 198 MB at the same throughput. A single feed lives in about 15 MB and peaks at ~165 MB
 * uncapped, while the cap would cost it ~9% more CPU (more full collections): below this count the default
 * stays, and the model (80 MB + 4 x (12 + 2.7 x feeds) MB) keeps such a process under the 200 MB budget.
 */
export const HEAP_GROWTH_CAP_FROM_FEEDS = 5;

/** The V8 flag capping the old space's growth for a process running `feeds` feeds; undefined = V8's default. */
export function heapGrowthFlagFor(feeds: number): string | undefined {
  // growth factor 1 + percent / 100
  return feeds >= HEAP_GROWTH_CAP_FROM_FEEDS ? '--heap-growing-percent=100' : undefined;
}

/**
 * Applies heapGrowthFlagFor(feeds) to this process. V8 reads the flag at each full collection, so setting
 * it at start (before the feeds allocate anything) takes effect; the number of feeds is only known once
 * FEEDS_FILE is read, after node's own flags were fixed.
 */
export function capHeapGrowthForFeeds(feeds: number): void {
  const flag = heapGrowthFlagFor(feeds);
  if (flag !== undefined) setFlagsFromString(flag);
}
