import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { IntakeClient } from '../../src/intake/client.js';

const PAGE = JSON.stringify({ events: [{ id: 'ev_1' }], meta: { iterator: 'next', limit: 250, done: false } });

let server: Server;
let baseUrl: string;
// the server answers a request only when the test says so: "sent" must be reported before any answer
const held: Array<() => void> = [];
const received: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    received.push(request.url ?? '');
    held.push(() => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(PAGE);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/intake_api/2024-12-10`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function untilReceived(count: number): Promise<void> {
  while (received.length < count) await new Promise((resolve) => setImmediate(resolve));
}

it('reports a GET /events request as sent once it is written, before its answer, once per call', async () => {
  const client = new IntakeClient({ baseUrl, apiKey: 'k', apiSecret: 's' });
  const sent: string[] = [];
  const other = client.listEvents({ iterator: 'a/b c', limit: 250 });
  const page = client.listEvents({ iterator: 'x y/z', limit: 7 }, { onSent: () => sent.push('x y/z') });
  await untilReceived(2);
  // the server has the request (so it was written) and has not answered: the report came first
  expect(sent).toEqual(['x y/z']);
  for (const answer of held.splice(0)) answer();
  await Promise.all([other, page]);
  expect(sent).toEqual(['x y/z']);
  // the query as undici wrote it (encoded by URLSearchParams) is what the report was matched on
  expect(received[1]).toBe('/intake_api/2024-12-10/events?iterator=x+y%2Fz&limit=7');
});

it('reports nothing for a request that was never written (connection refused)', async () => {
  const refused = new IntakeClient({
    baseUrl: 'http://127.0.0.1:1/intake_api/2024-12-10',
    apiKey: 'k',
    apiSecret: 's',
    retry: { retries: 0 },
  });
  const sent: string[] = [];
  await expect(refused.listEvents({ limit: 1 }, { onSent: () => sent.push('sent') })).rejects.toThrow();
  expect(sent).toEqual([]);
});
