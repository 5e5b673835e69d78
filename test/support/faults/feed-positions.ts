import { fetchPage, type FeedEntry } from './feed-reader.js';
import type { ApiAccess } from './sandbox-process.js';

/**
 * Maps an opaque iterator to a position in a feed read earlier: the number of
 * entries strictly before the first entry the feed serves from that iterator.
 * The iterator's format is not ours to decode, so the position is found by
 * asking the sandbox what comes next and locating that window in the feed.
 */
export class FeedPositions {
  private readonly cache = new Map<string, number>();

  constructor(
    private readonly access: ApiAccess,
    private readonly feed: readonly FeedEntry[],
  ) {}

  async positionOf(iterator: string): Promise<number> {
    const cached = this.cache.get(iterator);
    if (cached !== undefined) return cached;
    const page = await fetchPage(this.access, iterator, 50);
    const position = locateWindow(this.feed, page.entries);
    if (position === undefined) {
      throw new Error(`iterator ${iterator} serves entries that are not in the feed read at the start`);
    }
    this.cache.set(iterator, position);
    return position;
  }
}

/**
 * Smallest index where `window` occurs in `feed` (by entry text); an empty
 * window means the end of the feed. The smallest match is the weakest claim, so
 * an accidental repeat can only make the ahead-of-data check more lenient.
 */
export function locateWindow(feed: readonly FeedEntry[], window: readonly FeedEntry[]): number | undefined {
  if (window.length === 0) return feed.length;
  const first = window[0]?.text;
  outer: for (let i = 0; i < feed.length; i++) {
    if (feed[i]?.text !== first) continue;
    // a window running past the end of the recorded feed matches on the part that overlaps
    for (let j = 1; j < window.length && i + j < feed.length; j++) if (feed[i + j]?.text !== window[j]?.text) continue outer;
    return i;
  }
  return undefined;
}
