import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { IntakeClient } from '../../src/intake/client.js';

// a page as large as a real one (~175 KB): loopback hands it over in several chunks
const PAGE = JSON.stringify({
  events: Array.from({ length: 250 }, (_, i) => ({ id: `ev_${i}`, name: 'prescription.accepted', padding: 'x'.repeat(650) })),
  meta: { iterator: 'next', limit: 250, done: false },
});

let server: Server;
let connections = 0;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(PAGE);
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/intake_api/2024-12-10`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

it('sends each request as soon as the previous one returned on the same connection (the poller prefetches in that tick)', async () => {
  const client = new IntakeClient({ baseUrl, apiKey: 'k', apiSecret: 's' });
  // back to back, the next call made in the very continuation of the previous one, as the poller's prefetch is
  let page = await client.listEvents({ limit: 250 });
  for (let i = 0; i < 10; i++) page = await client.listEvents({ iterator: page.meta.iterator, limit: 250 });
  expect(page.events).toHaveLength(250);
  // undici frees a connection a tick after its body ended: without the client waiting for that, the
  // requests alternate between two connections (each a handshake, and a TLS one, over a real network)
  expect(connections).toBe(1);
});
