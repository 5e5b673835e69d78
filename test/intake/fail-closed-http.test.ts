import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { IntakeClient } from '../../src/intake/client.js';
import { EventsNotFoundError, RequestValidationError, UnexpectedStatusError } from '../../src/intake/errors/index.js';
import { samplePrescription } from '../../src/sandbox/fixtures.js';
import { observedClient } from '../support/intake/test-client.js';

// Issue 17 §2 (HTTP): a hostile or misconfigured operator, over real sockets.

interface Recorder {
  server: Server;
  origin: string;
  seen: Array<{ method: string; url: string; body: string; authorization: string | undefined }>;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

async function recorder(answer: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<Recorder> {
  const seen: Recorder['seen'] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', body, authorization: req.headers.authorization });
      answer(req, res, body);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const BASE = '/intake_api/2024-12-10';
const credential = { key: 'key-1', secret: 'secret-1' };

describe('redirects are never followed', () => {
  it('a 307 to another origin: the prescription never reaches it, the 307 is named and not retried', async () => {
    const elsewhere = await recorder((_req, res) => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end('{}');
    });
    const hostile = await recorder((req, res) => {
      res.writeHead(307, { location: `${elsewhere.origin}${req.url ?? '/'}` });
      res.end();
    });
    const { client, retries } = observedClient(`${hostile.origin}${BASE}`, credential);
    const prescription = samplePrescription(1);
    const error = await client.createPrescription(prescription).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnexpectedStatusError);
    expect((error as UnexpectedStatusError).status).toBe(307);
    expect((error as Error).message).toMatch(/307 \(a redirect: not followed/);
    // the Location is not echoed: it is the hostile party's choice
    expect((error as Error).message).not.toContain(elsewhere.origin);
    expect(elsewhere.seen, 'requests that reached the redirect target').toHaveLength(0);
    expect(hostile.seen.filter((r) => r.method === 'POST')).toHaveLength(1);
    expect(retries).toHaveLength(0);
  });

  it('a redirected GET /events is not read from whoever answers', async () => {
    const elsewhere = await recorder((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ events: [], meta: { iterator: 'forged', done: true } }));
    });
    const hostile = await recorder((req, res) => {
      res.writeHead(308, { location: `${elsewhere.origin}${req.url ?? '/'}` });
      res.end();
    });
    const { client } = observedClient(`${hostile.origin}${BASE}`, credential);
    await expect(client.listEvents({ limit: 1 })).rejects.toBeInstanceOf(UnexpectedStatusError);
    expect(elsewhere.seen).toHaveLength(0);
  });
});

describe('404 on /events is a configuration error naming the URL', () => {
  it('is raised once (not retried) and names the base URL', async () => {
    const wrong = await recorder((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'Not Found' }));
    });
    // a base URL that the config parse would refuse; a client built by hand still gets a clear error
    const { client, retries } = observedClient(`${wrong.origin}/api`, credential);
    const error = await client.listEvents().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EventsNotFoundError);
    expect((error as Error).message).toContain(`GET ${wrong.origin}/api/events answered 404`);
    expect((error as Error).message).toContain('INTAKE_API_BASE_URL');
    expect(wrong.seen).toHaveLength(1);
    expect(retries).toHaveLength(0);
  });
});

describe('path-changing identifiers are refused before any request', () => {
  it.each(['', '.', '..', 'a/b', '..%2F', '%2e%2e', 'a\\b', 'a\nb', 'a\u0000'])('%j', async (id) => {
    const server = await recorder((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    const { client } = observedClient(`${server.origin}${BASE}`, credential);
    for (const call of [
      () => client.cancelPrescription(id),
      () => client.getPrescription(id),
      () => client.getEvent(id),
      () => client.getSubscription(id),
      () => client.cancelSubscription(id),
    ]) {
      await expect(call()).rejects.toBeInstanceOf(RequestValidationError);
    }
    if (id !== '') {
      const error = await client.createPrescription({ ...samplePrescription(2), external_id: id }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RequestValidationError);
      expect((error as Error).message).toContain('prescription.external_id');
    }
    expect(server.seen).toHaveLength(0);
  });
});

describe('base URLs with userinfo', () => {
  it('are refused by the client without echoing them', () => {
    expect(() => new IntakeClient({ baseUrl: 'https://user:pw@op.example/intake_api/2024-12-10', apiKey: 'k', apiSecret: 's' })).toThrow(
      /must not carry a user or password/,
    );
  });
});
