import { afterEach, describe, expect, test } from 'vitest';
import { OversizedEventError } from '../../../src/sync/poll/errors/oversized-event-error.js';
import { shrinkingFetch } from '../../../src/sync/poll/shrinking-fetch.js';
import { startHostileFeedServer, type HostileFeedServer } from '../../support/hostile-feed-server.js';
import { observedClient } from '../../support/intake/test-client.js';

const CREDENTIAL = { key: 'k', secret: 's' };
const small = (n: number) => JSON.stringify({ id: `e${n}`, name: 'accepted', payload: { blob: 'x'.repeat(900) } });
const large = (n: number, bytes: number) => JSON.stringify({ id: `e${n}`, name: 'accepted', payload: { blob: 'y'.repeat(bytes) } });

let server: HostileFeedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function fetcherFor(baseUrl: string, capBytes: number, pageLimit: number) {
  const { client } = observedClient(baseUrl, CREDENTIAL, { maxResponseBytes: capBytes });
  const warnings: string[] = [];
  const fetch = shrinkingFetch(
    ({ iterator, limit }, signal) => client.listEvents({ ...(iterator === null ? {} : { iterator }), limit }, { signal }),
    pageLimit,
    { warn: (_fields: unknown, message: string) => warnings.push(message) } as never,
  );
  return { fetch, warnings };
}

async function drain(fetch: ReturnType<typeof fetcherFor>['fetch']) {
  const ids: string[] = [];
  let iterator: string | null = null;
  for (;;) {
    const page = await fetch({ iterator }, new AbortController().signal);
    ids.push(...page.events.map((e) => (e as { id: string }).id));
    iterator = page.meta.iterator;
    if (page.meta.done) return ids;
  }
}

describe('shrinkingFetch: a page too large is asked again with half the limit', () => {
  test('halves past a large event, then doubles back; every event read once, in order', async () => {
    // 160 events of ~1 kB and one of 60 kB at position 20, under a 64 kB cap
    const texts = Array.from({ length: 160 }, (_, n) => (n === 20 ? large(n, 60_000) : small(n)));
    server = await startHostileFeedServer(texts);
    const { fetch, warnings } = fetcherFor(server.baseUrl, 64 * 1024, 32);
    const ids = await drain(fetch);
    expect(ids).toEqual(texts.map((_, n) => `e${n}`));
    expect(server.limits.slice(0, 2)).toEqual([32, 16]);
    expect(Math.min(...server.limits)).toBeGreaterThanOrEqual(1);
    expect(server.limits).toContain(16);
    // back to the full limit after the large event
    expect(server.limits.at(-1)).toBe(32);
    expect(warnings[0]).toMatch(/too large a page at limit 32: asking for 16/);
  });

  test('one event alone over the cap: OversizedEventError naming the position, after limit 1', async () => {
    const texts = [small(0), small(1), large(2, 200_000), small(3)];
    server = await startHostileFeedServer(texts, { contentLength: false });
    const { fetch } = fetcherFor(server.baseUrl, 64 * 1024, 8);
    const first = await fetch({ iterator: null }, new AbortController().signal);
    // the first page at 8 and 4 holds the large event; at 2 it does not
    expect(first.events.map((e) => (e as { id: string }).id)).toEqual(['e0', 'e1']);
    expect(server.limits).toEqual([8, 4, 2]);
    const error = await fetch({ iterator: '2' }, new AbortController().signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OversizedEventError);
    expect(error).toMatchObject({ iterator: '2', capBytes: 64 * 1024 });
    expect((error as Error).message).toMatch(/^GET \/events at iterator 2: too large even at limit=1 \(.*MAX_RESPONSE_BYTES\)$/);
    expect(server.limits.slice(3)).toEqual([4, 2, 1]);
  });

  test('more events than the spec allows in a page counts as too large', async () => {
    const texts = Array.from({ length: 300 }, (_, n) => JSON.stringify({ id: `e${n}` }));
    server = await startHostileFeedServer(texts, { ignoreLimit: true });
    const { fetch } = fetcherFor(server.baseUrl, 1024 * 1024, 250);
    await expect(fetch({ iterator: null }, new AbortController().signal)).rejects.toThrow(OversizedEventError);
    expect(server.limits).toEqual([250, 125, 62, 31, 15, 7, 3, 1]);
  });
});
