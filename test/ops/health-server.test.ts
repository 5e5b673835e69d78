import { connect, type Socket } from 'node:net';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { cachedProbe, type HealthServer, type HealthServerLimits, startHealthServer } from '../../src/ops/health-server.js';
import { createSyncMetrics } from '../../src/ops/metrics.js';
import { WorkerState } from '../../src/sync/state/worker-state.js';

/** The health server on real sockets (issue 17 §3): timeouts, a connection cap, a cached database probe. */
let server: HealthServer | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await server?.close();
  server = undefined;
});

async function start(
  limits: Partial<HealthServerLimits>,
  probeDatabase: () => Promise<boolean> = async () => true,
  clock = { now: () => Date.now() },
) {
  const state = new WorkerState(clock);
  server = await startHealthServer({
    host: '127.0.0.1',
    port: 0,
    state,
    metrics: createSyncMetrics(state, clock, { feed: 'default', pollIntervalMs: 5_000, readyMaxPollAgeMs: 60_000 }),
    probeDatabase,
    thresholds: { maxPollAgeMs: 60_000, maxFailures: 5 },
    clock,
    log: pino({ level: 'silent' }),
    limits,
  });
  return server;
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
    sockets.push(socket);
  });
}

/** Resolves with the ms until the server closed `socket` (end or reset), and what it sent. */
function closedBy(socket: Socket): Promise<{ afterMs: number; received: string }> {
  const started = Date.now();
  let received = '';
  return new Promise((resolve) => {
    socket.on('data', (chunk) => {
      received += String(chunk);
    });
    socket.on('error', () => {});
    socket.once('close', () => resolve({ afterMs: Date.now() - started, received }));
  });
}

describe('the health server on real sockets', () => {
  it('cuts off a client whose headers never finish (slowloris), and still serves others', async () => {
    const { port } = await start({ headersTimeoutMs: 300, requestTimeoutMs: 600, checkIntervalMs: 100 });
    const slow = await open(port);
    slow.write('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    const closed = closedBy(slow);
    // keeps trickling a header byte that never ends the headers
    const trickle = setInterval(() => slow.writable && slow.write('a'), 50);
    try {
      const { afterMs, received } = await closed;
      expect(afterMs).toBeLessThan(5_000);
      expect(received).toMatch(/^HTTP\/1\.1 408|^$/);
    } finally {
      clearInterval(trickle);
    }
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });

  it('closes connections beyond the cap on accept', async () => {
    const { port } = await start({ maxConnections: 3 });
    const held = await Promise.all([open(port), open(port), open(port)]);
    // the server has accepted them all before the next one arrives
    await Promise.all(held.map((s) => new Promise((r) => s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', r))));
    for (const s of held) await new Promise((r) => s.once('data', r));
    const extra = await open(port);
    const { received } = await closedBy(extra);
    expect(received).toBe('');
    for (const s of held) s.destroy();
  });

  it('refuses headers over the size limit', async () => {
    const { port } = await start({ maxHeaderSize: 1024 });
    const response = await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { 'x-big': 'a'.repeat(4096) } });
    expect(response.status).toBe(431);
  });

  it('/readyz probes the database at most once per cache period', async () => {
    let probes = 0;
    let now = 1_000_000;
    const clock = { now: () => now };
    const { port } = await start(
      { probeCacheMs: 1_500 },
      async () => {
        probes += 1;
        return true;
      },
      clock,
    );
    await Promise.all(Array.from({ length: 10 }, () => fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.text())));
    expect(probes).toBe(1);
    now += 1_499;
    await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.text());
    expect(probes).toBe(1);
    now += 1;
    await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.text());
    expect(probes).toBe(2);
  });
});

describe('cachedProbe', () => {
  it('shares the probe in flight and caches its answer, failures included', async () => {
    let now = 0;
    let calls = 0;
    let answer = false;
    const probe = cachedProbe(
      async () => {
        calls += 1;
        return answer;
      },
      1_000,
      { now: () => now },
    );
    expect(await Promise.all([probe(), probe(), probe()])).toEqual([false, false, false]);
    expect(calls).toBe(1);
    answer = true;
    now = 999;
    expect(await probe()).toBe(false);
    now = 1_000;
    expect(await probe()).toBe(true);
    expect(calls).toBe(2);
  });
});
