import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import { NetworkError, UnprocessableEntityError, UpstreamError } from '../../src/intake/errors/index.js';
import { ManualClock } from '../../src/sandbox/clock.js';
import { samplePrescription } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { startForwardingProxy, type ForwardingProxy, type SeenRequest } from '../support/intake/forwarding-proxy.js';
import { observedClient } from '../support/intake/test-client.js';

let sandbox: Sandbox;
const proxies: ForwardingProxy[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ clock: new ManualClock() });
});
afterEach(async () => {
  sandbox.setFaults({ errorRate: 0, dropRate: 0, hangRate: 0 });
  await Promise.all(proxies.splice(0).map((p) => p.close()));
});
afterAll(async () => {
  await sandbox?.close();
});

const credential = () => sandbox.credentials[0] ?? { key: '', secret: '' };
const storedPrescriptions = () => sandbox.store.stats().credentials.find((c) => c.key === credential().key)?.prescriptions ?? 0;
const trail = (proxy: ForwardingProxy) => proxy.seen.map((s) => `${s.method} ${s.path}`);
const isPost = (r: SeenRequest) => r.method === 'POST' && r.path === '/prescriptions';

async function proxyWith(options: Parameters<typeof startForwardingProxy>[1]): Promise<ForwardingProxy> {
  const proxy = await startForwardingProxy(sandbox.baseUrl, options);
  proxies.push(proxy);
  return proxy;
}

describe('POST /prescriptions reconciliation', () => {
  it('a POST that landed but lost its response is found by GET, not sent again', async () => {
    let posts = 0;
    const proxy = await proxyWith({ loseResponse: (r) => isPost(r) && ++posts === 1 });
    const { client, retries } = observedClient(proxy.baseUrl, credential());
    const before = storedPrescriptions();
    const created = await client.createPrescription(samplePrescription(1, { prefix: 'recon' }));
    expect(created.external_id).toBe('recon-1');
    expect(retries.map((r) => r.error)).toEqual([expect.any(NetworkError)]);
    expect(trail(proxy)).toEqual(['POST /prescriptions', 'GET /prescriptions/recon-1']);
    expect(storedPrescriptions() - before).toBe(1);
  });

  it('a POST dropped before the operator read it is sent again after GET says 404', async () => {
    sandbox.setFaults({ dropRate: 1 });
    const proxy = await proxyWith({});
    const { client } = observedClient(proxy.baseUrl, credential(), {
      onRetry: () => sandbox.setFaults({ dropRate: 0 }),
    });
    const before = storedPrescriptions();
    const created = await client.createPrescription(samplePrescription(2, { prefix: 'recon' }));
    expect(created.external_id).toBe('recon-2');
    expect(trail(proxy)).toEqual(['POST /prescriptions', 'GET /prescriptions/recon-2', 'POST /prescriptions']);
    expect(storedPrescriptions() - before).toBe(1);
  });

  it('a 422 "external_id taken" after an ambiguous failure is settled by GET', async () => {
    let posts = 0;
    let gets = 0;
    const proxy = await proxyWith({
      loseResponse: (r) => isPost(r) && ++posts === 1,
      // the first lookup lags behind the write that landed: 404
      answerLocally: (r) => (r.method === 'GET' && ++gets === 1 ? { status: 404, body: { error: 'not found' } } : undefined),
    });
    const { client } = observedClient(proxy.baseUrl, credential());
    const created = await client.createPrescription(samplePrescription(3, { prefix: 'recon' }));
    expect(created.external_id).toBe('recon-3');
    expect(trail(proxy)).toEqual([
      'POST /prescriptions',
      'GET /prescriptions/recon-3',
      'POST /prescriptions',
      'GET /prescriptions/recon-3',
    ]);
  });

  it("a 422 on a first attempt is the caller's error, not reconciled", async () => {
    const proxy = await proxyWith({});
    const { client } = observedClient(proxy.baseUrl, credential());
    await client.createPrescription(samplePrescription(4, { prefix: 'recon' }));
    await expect(client.createPrescription(samplePrescription(4, { prefix: 'recon' }))).rejects.toBeInstanceOf(UnprocessableEntityError);
    expect(trail(proxy)).toEqual(['POST /prescriptions', 'POST /prescriptions']);
  });

  it('a 5xx that may have landed is reconciled on every later attempt until the operator answers', async () => {
    sandbox.setFaults({ errorRate: 1 });
    const proxy = await proxyWith({});
    const { client } = observedClient(proxy.baseUrl, credential(), {
      onRetry: (info) => {
        if (info.attempt === 2) sandbox.setFaults({ errorRate: 0 });
      },
    });
    const created = await client.createPrescription(samplePrescription(5, { prefix: 'recon' }));
    expect(created.external_id).toBe('recon-5');
    // attempt 1: POST 5xx; attempt 2: GET 5xx; attempt 3: GET 404, then POST 201
    expect(trail(proxy)).toEqual([
      'POST /prescriptions',
      'GET /prescriptions/recon-5',
      'GET /prescriptions/recon-5',
      'POST /prescriptions',
    ]);
  });

  it('gives up with the last error when the operator never recovers', async () => {
    sandbox.setFaults({ errorRate: 1 });
    const { client, retries } = observedClient(sandbox.baseUrl, credential(), { retry: { retries: 2 } });
    await expect(client.createPrescription(samplePrescription(6, { prefix: 'recon' }))).rejects.toBeInstanceOf(UpstreamError);
    expect(retries).toHaveLength(2);
  });
});
