import { performance } from 'node:perf_hooks';
import type postgres from 'postgres';

/** The longest stretch without a page applied within a window, and how many pages it saw. */
export interface GapSummary {
  pages: number;
  longest_gap_ms: number;
}

/**
 * Watches the feed's checkpoint (pages_applied) every `everyMs` on a connection of its own, which no
 * match lock blocks, and remembers when each change was seen: the gaps between them are the times the
 * daemon applied no page. Resolution: `everyMs` plus one query.
 */
export function watchPages(sql: postgres.Sql, feed: string, everyMs = 10) {
  const seen: Array<{ at: number; pages: number }> = [];
  let stopped = false;
  const loop = (async () => {
    let last = -1;
    while (!stopped) {
      const [row] = await sql<{ pages: string }[]>`select pages_applied as pages from intake_sync.feed_checkpoints where feed = ${feed}`;
      const pages = Number(row?.pages ?? 0);
      if (pages !== last) seen.push({ at: performance.now(), pages });
      last = pages;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    /** pages applied so far (as last seen) */
    pages: () => seen.at(-1)?.pages ?? 0,
    /** the gaps within [from, to] (performance.now() times), edges included */
    within(from: number, to: number): GapSummary {
      const inside = seen.filter((s) => s.at >= from && s.at <= to);
      const before = seen.filter((s) => s.at < from).at(-1);
      const marks = [from, ...inside.map((s) => s.at), to];
      let longest = 0;
      for (let i = 1; i < marks.length; i++) longest = Math.max(longest, (marks[i] ?? 0) - (marks[i - 1] ?? 0));
      const pages = (inside.at(-1)?.pages ?? before?.pages ?? 0) - (before?.pages ?? inside[0]?.pages ?? 0);
      return { pages, longest_gap_ms: Math.round(longest) };
    },
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
