import { afterEach, describe, expect, test } from 'vitest';
import { ResponseTooLargeError } from '../../src/intake/errors/response-too-large-error.js';
import { startHostileFeedServer, type HostileFeedServer } from '../support/hostile-feed-server.js';
import { observedClient } from '../support/intake/test-client.js';

const CREDENTIAL = { key: 'k', secret: 's' };
const small = (id: string) => JSON.stringify({ id, name: 'accepted' });
const big = (id: string, bytes: number) => JSON.stringify({ id, name: 'accepted', payload: { blob: 'x'.repeat(bytes) } });

let server: HostileFeedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('response bodies are read with a byte cap', () => {
  test('a body under the cap is read whole', async () => {
    server = await startHostileFeedServer([small('e1'), big('e2', 10_000)]);
    const { client } = observedClient(server.baseUrl, CREDENTIAL, { maxResponseBytes: 64 * 1024 });
    const page = await client.listEvents({ limit: 10 });
    expect(page.events).toHaveLength(2);
  });

  test.each([
    ['declared by Content-Length', true, 300_000],
    ['streamed without Content-Length', false, undefined],
  ])('a body over the cap, %s, fails with its own error and is not retried', async (_label, contentLength, declared) => {
    server = await startHostileFeedServer([big('e1', 300_000 - 60)], { contentLength });
    const { client, retries } = observedClient(server.baseUrl, CREDENTIAL, { maxResponseBytes: 100_000 });
    const error = await client.listEvents({ limit: 5 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    const tooLarge = error as ResponseTooLargeError;
    expect(tooLarge.message).toMatch(/^GET \/events: response body larger than 100000 bytes.*the cap is MAX_RESPONSE_BYTES$/);
    expect(tooLarge.capBytes).toBe(100_000);
    if (declared === undefined) expect(tooLarge.declaredBytes).toBeUndefined();
    else expect(tooLarge.declaredBytes).toBeGreaterThan(100_000);
    expect(retries).toEqual([]);
  });

  test('a client that refused a body goes on reading the next one', async () => {
    server = await startHostileFeedServer([big('e1', 200_000), small('e2')], { contentLength: false });
    const { client } = observedClient(server.baseUrl, CREDENTIAL, { maxResponseBytes: 100_000 });
    await expect(client.listEvents({ limit: 2 })).rejects.toThrow(ResponseTooLargeError);
    expect((await client.listEvents({ iterator: '1', limit: 1 })).events).toEqual([{ id: 'e2', name: 'accepted' }]);
  });
});
