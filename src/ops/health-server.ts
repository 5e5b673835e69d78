import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log/log.js';
import type { WorkerState } from '../sync/state/worker-state.js';
import { evaluateFeedsLiveness, evaluateFeedsReadiness, type FeedSnapshot } from './feeds-health.js';
import { evaluateLiveness } from './liveness.js';
import type { SyncMetrics } from './metrics.js';
import type { ReadinessThresholds } from './readiness.js';
import { VERSION } from '../version.js';

export interface HealthServerOptions {
  host: string;
  /** 0 = an ephemeral port; the bound one is on the returned server */
  port: number;
  /** a single-feed process's state (the feed's name is then not needed); or `feeds` */
  state?: WorkerState;
  /** every feed of the process with its state: /healthz and /readyz report each */
  feeds?: ReadonlyArray<{ feed: string; state: WorkerState }>;
  metrics: SyncMetrics;
  /** true when the database answers a trivial query; must not throw */
  probeDatabase(): Promise<boolean>;
  thresholds: ReadinessThresholds;
  clock: { now(): number };
  log: Logger;
  /** limits of the socket server; defaults in HEALTH_SERVER_LIMITS */
  limits?: Partial<HealthServerLimits>;
}

/**
 * The ops port faces the cluster network: a client that opens sockets and never finishes its
 * request (slowloris), or opens hundreds, must not hold the daemon's memory or file descriptors.
 */
export interface HealthServerLimits {
  /** the request's headers must arrive within this */
  headersTimeoutMs: number;
  /** the whole request within this */
  requestTimeoutMs: number;
  /** how often Node checks the two timeouts above (its default, 30 s, would let a slow client stay that long) */
  checkIntervalMs: number;
  /** sockets open at once; further ones are closed on accept */
  maxConnections: number;
  /** bytes of request headers */
  maxHeaderSize: number;
  /** /readyz answers from a database probe at most this old: a scrape storm is not a query storm */
  probeCacheMs: number;
}

export const HEALTH_SERVER_LIMITS: HealthServerLimits = {
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  checkIntervalMs: 1_000,
  maxConnections: 64,
  maxHeaderSize: 8 * 1024,
  probeCacheMs: 1_500,
};

export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

/** Serves /healthz, /readyz and /metrics. Bodies carry states and counts only, never PHI. */
export async function startHealthServer(given: HealthServerOptions): Promise<HealthServer> {
  const limits = { ...HEALTH_SERVER_LIMITS, ...given.limits };
  const options = { ...given, probeDatabase: cachedProbe(given.probeDatabase, limits.probeCacheMs, given.clock) };
  const server = createServer(
    { connectionsCheckingInterval: limits.checkIntervalMs, maxHeaderSize: limits.maxHeaderSize },
    (request, response) => {
      handle(options, request, response).catch((error: unknown) => {
        options.log.error({ error: error instanceof Error ? error.name : typeof error }, 'health endpoint failed');
        if (!response.headersSent) sendJson(response, 500, { status: 'error' });
        else response.end();
      });
    },
  );
  // a scraper's keep-alive connection must not hold shutdown open
  server.keepAliveTimeout = 1_000;
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.maxConnections = limits.maxConnections;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  options.log.info({ port }, 'health endpoint listening (/healthz, /readyz, /metrics)');
  return {
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

async function handle(options: HealthServerOptions, request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    sendJson(response, 405, { error: 'method not allowed' });
    return;
  }
  const path = new URL(request.url ?? '/', 'http://health').pathname;
  const feeds = snapshotsOf(options);
  switch (path) {
    case '/healthz': {
      const liveness = evaluateFeedsLiveness(feeds);
      const perFeed = Object.fromEntries(
        feeds.map(({ feed, snapshot }) => [feed, { role: snapshot.role, reason: evaluateLiveness(snapshot).reason }]),
      );
      sendJson(response, liveness.alive ? 200 : 503, {
        status: liveness.alive ? 'ok' : 'dead',
        version: VERSION,
        role: evaluateFeedsReadiness(feeds, true, options.thresholds, 0).role,
        reason: liveness.reasons.length === 0 ? null : liveness.reasons.join('; '),
        feeds: perFeed,
      });
      return;
    }
    case '/readyz': {
      const readiness = evaluateFeedsReadiness(feeds, await options.probeDatabase(), options.thresholds, options.clock.now());
      const only = feeds.length === 1 ? feeds[0]?.snapshot : undefined;
      sendJson(response, readiness.ready ? 200 : 503, {
        status: readiness.ready ? 'ready' : 'not ready',
        role: readiness.role,
        reasons: readiness.reasons,
        // process-wide: the worst feed's count, the oldest feed's success (per feed under `feeds`)
        consecutive_failures: Math.max(0, ...feeds.map((f) => f.snapshot.consecutiveFailures)),
        last_success_at: only ? (only.lastSuccessAt === null ? null : new Date(only.lastSuccessAt).toISOString()) : oldestSuccess(feeds),
        feeds: readiness.feeds,
      });
      return;
    }
    case '/metrics': {
      const body = await options.metrics.registry.metrics();
      response.writeHead(200, { 'content-type': options.metrics.registry.contentType });
      response.end(body);
      return;
    }
    default:
      sendJson(response, 404, { error: 'not found', paths: ['/healthz', '/readyz', '/metrics'] });
  }
}

/**
 * `probe` answered from a result at most `ttlMs` old; concurrent callers share the probe in flight.
 * The probe itself is bounded (database-probe.ts) and never throws.
 */
export function cachedProbe(probe: () => Promise<boolean>, ttlMs: number, clock: { now(): number }): () => Promise<boolean> {
  let last: { at: number; ok: boolean } | undefined;
  let inFlight: Promise<boolean> | undefined;
  return () => {
    if (last && clock.now() - last.at < ttlMs) return Promise.resolve(last.ok);
    inFlight ??= probe().then((ok) => {
      last = { at: clock.now(), ok };
      inFlight = undefined;
      return ok;
    });
    return inFlight;
  };
}

function snapshotsOf(options: HealthServerOptions): FeedSnapshot[] {
  if (options.feeds) return options.feeds.map(({ feed, state }) => ({ feed, snapshot: state.snapshot() }));
  if (!options.state) throw new Error('the health server needs a state or feeds');
  return [{ feed: 'default', snapshot: options.state.snapshot() }];
}

function oldestSuccess(feeds: readonly FeedSnapshot[]): string | null {
  const times = feeds.map((f) => f.snapshot.lastSuccessAt);
  if (times.some((t) => t === null)) return null;
  return new Date(Math.min(...(times as number[]))).toISOString();
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  response.end(JSON.stringify(body));
}
