import type { ApiAccess } from './sandbox-process.js';

/** One raw feed entry as served: any JSON value (malformed ones included). */
export interface FeedEntry {
  raw: unknown;
  /** the entry's `id` when it is a non-empty string */
  id: string | undefined;
  /** canonical text of the entry, used to match windows of the feed */
  text: string;
}

export interface FeedPage {
  entries: FeedEntry[];
  iterator: string;
  done: boolean;
}

/** The bearer credential the spec defines: base64 of `key:secret`. */
export function bearerToken(access: Pick<ApiAccess, 'key' | 'secret'>): string {
  return Buffer.from(`${access.key}:${access.secret}`).toString('base64');
}

/** Turns a raw value into a FeedEntry. */
export function toEntry(raw: unknown): FeedEntry {
  const id = raw && typeof raw === 'object' && 'id' in raw && typeof raw.id === 'string' && raw.id ? raw.id : undefined;
  return { raw, id, text: JSON.stringify(raw) };
}

/**
 * One GET /events, retried past the simulator's transport faults (5xx, 429,
 * resets, hangs, truncated or wrong-shaped bodies) with a short fixed pause:
 * this is the harness's own independent reader, not the worker under test.
 */
export async function fetchPage(access: ApiAccess, iterator: string | undefined, limit: number): Promise<FeedPage> {
  const url = new URL(`${access.baseUrl}/events`);
  url.searchParams.set('limit', String(limit));
  if (iterator !== undefined) url.searchParams.set('iterator', iterator);
  let lastProblem = '';
  for (let attempt = 0; attempt < 200; attempt++) {
    try {
      const response = await fetch(url, {
        headers: { authorization: `Bearer ${bearerToken(access)}` },
        signal: AbortSignal.timeout(3_000),
      });
      const text = await response.text();
      if (response.status === 401) throw new Error('401 from the feed: the harness credential was revoked');
      if (response.ok) {
        const page = parsePage(text);
        if (page) return page;
        lastProblem = `unusable 200 body (${text.length} chars)`;
      } else {
        lastProblem = `HTTP ${response.status}`;
      }
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('401')) throw error;
      lastProblem = error instanceof Error ? error.message : String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`GET /events kept failing (iterator ${iterator ?? '(start)'}): ${lastProblem}`);
}

function parsePage(text: string): FeedPage | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!body || typeof body !== 'object' || !('events' in body) || !('meta' in body)) return undefined;
  const { events, meta } = body as { events: unknown; meta: unknown };
  if (!Array.isArray(events) || !meta || typeof meta !== 'object') return undefined;
  const { iterator, done } = meta as { iterator?: unknown; done?: unknown };
  if (typeof iterator !== 'string' || typeof done !== 'boolean') return undefined;
  return { entries: events.map(toEntry), iterator, done };
}

/**
 * Reads the whole feed from the start. With iterator mode 'at' the returned
 * iterator points at the last event, so each later page repeats it first; that
 * repeat is dropped so the result is the feed itself, each entry once.
 */
export async function readWholeFeed(access: ApiAccess, iteratorMode: 'after' | 'at'): Promise<FeedEntry[]> {
  const entries: FeedEntry[] = [];
  let iterator: string | undefined;
  for (let pages = 0; pages < 100_000; pages++) {
    const page = await fetchPage(access, iterator, 250);
    const fresh = iteratorMode === 'at' && iterator !== undefined ? page.entries.slice(1) : page.entries;
    entries.push(...fresh);
    if (page.done || fresh.length === 0) return entries;
    iterator = page.iterator;
  }
  throw new Error('the feed did not report done within 100000 pages');
}
