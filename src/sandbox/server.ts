import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ADMIN_BASE_PATH, routeAdmin } from './admin.js';
import { ManualClock, scaledClock, systemClock, type Clock } from './clock.js';
import { FaultControl } from './fault-control.js';
import { latencyFor, pickTransportFault, type FaultConfig } from './faults.js';
import { parseBearer } from './auth.js';
import { decodeSegment, sendError } from './http.js';
import type { RouteContext } from './route-context.js';
import { routeEvents } from './routes-events.js';
import { routePrescriptions } from './routes-prescriptions.js';
import { routeSubscriptions } from './routes-subscriptions.js';
import { retentionSchema, type Retention } from './retention.js';
import { SandboxStore, type Credential } from './store.js';
import { actOutTransportFault } from './transport-faults.js';
import { RequestHolds, type HoldRule, type RequestHold } from './request-hold.js';
import { parseServedVersions, versionBasePath, type VersionListing } from './versions.js';

export interface SandboxOptions {
  /** default 127.0.0.1 */
  host?: string;
  /** default 0: an ephemeral port */
  port?: number;
  clock?: Clock;
  /** used when no clock is given: sandbox time runs this many times faster than real time */
  timeScale?: number;
  /** default: one random pair */
  credentials?: Credential[];
  faults?: Partial<FaultConfig>;
  /** serve /_sandbox admin endpoints; default true */
  admin?: boolean;
  /** entries published longer ago than this disappear from the feed; default: kept forever */
  retention?: Retention;
  /** versions served, each under /intake_api/<version>; the first is the default; default only 2024-12-10 */
  versions?: readonly string[];
  /** whether one version's GET /events lists only its own events (default) or every event (versions.ts) */
  versionListing?: VersionListing;
}

export interface Sandbox {
  /** the default (first) version's: http://HOST:PORT/intake_api/2024-12-10 */
  baseUrl: string;
  /** the served versions, the default first */
  versions: readonly string[];
  /** http://HOST:PORT/intake_api/<version> (served or not: an unserved one answers 404) */
  baseUrlFor(version: string): string;
  origin: string;
  port: number;
  credentials: Credential[];
  clock: Clock;
  store: SandboxStore;
  faults(): FaultConfig;
  setFaults(partial: Partial<FaultConfig>): void;
  /** holds one future request at a known point (request-hold.ts); released by the caller or by close() */
  hold(rule: HoldRule): RequestHold;
  close(): Promise<void>;
}

function randomCredential(): Credential {
  return { key: `sandbox_${randomBytes(6).toString('hex')}`, secret: randomBytes(18).toString('base64url') };
}

function isUnder(pathname: string, base: string): boolean {
  return pathname === base || pathname.startsWith(`${base}/`);
}

/** Starts the operator API simulator on a real socket. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const baseClock = options.clock ?? (options.timeScale && options.timeScale !== 1 ? scaledClock(options.timeScale) : systemClock);
  // admin clock moves on a clock we cannot advance are kept as a skew on top of it
  let skewMs = 0;
  const clock: Clock = baseClock instanceof ManualClock ? baseClock : { now: () => baseClock.now() + skewMs };
  const credentials = options.credentials ?? [randomCredential()];
  const faults = new FaultControl(options.faults);
  const versions = parseServedVersions(options.versions);
  const store = new SandboxStore(() => clock.now(), faults, credentials, versions, options.versionListing ?? 'separate');
  if (options.retention) store.retention = retentionSchema.parse(options.retention);
  const adminEnabled = options.admin ?? true;
  const latencyTimers = new Set<NodeJS.Timeout>();
  const holds = new RequestHolds();
  const released: Array<() => void> = [];
  let closing = false;
  let closed: Promise<void> | undefined;

  const advanceClock = (ms: number): number => {
    if (baseClock instanceof ManualClock) baseClock.advance(ms);
    else skewMs += ms;
    return clock.now();
  };

  const delay = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        latencyTimers.delete(timer);
        resolve();
      }, ms);
      latencyTimers.add(timer);
    });

  async function serveApi(req: IncomingMessage, res: ServerResponse, url: URL, apiVersion: string): Promise<void> {
    const latency = latencyFor(faults.config, faults.transportRandom);
    if (latency > 0) await delay(latency);
    if (closing) return;
    const fault = pickTransportFault(faults.config, faults.transportRandom);
    if (fault) return actOutTransportFault(fault, req, res, faults.config, faults.transportRandom);

    const bearer = parseBearer(req.headers.authorization);
    const tenant = bearer && store.authenticate(bearer.key, bearer.secret);
    if (!tenant) return sendError(res, 401, bearer ? 'invalid credentials' : 'missing bearer credentials');
    store.publishDue();

    const segments = url.pathname
      .slice(versionBasePath(apiVersion).length + 1)
      .split('/')
      .map(decodeSegment);
    if (segments.some((s) => s === undefined)) return sendError(res, 400, 'malformed percent-encoding in path');
    const [resource, ...rest] = segments as string[];
    store.apiRequests.count(apiVersion, resource ?? '');
    const proceed = await holds.gate(req.method ?? 'GET', apiVersion, resource ?? '', res);
    if (!proceed || closing) return;
    const ctx: RouteContext = { req, res, url, tenant, store, faults, apiVersion };
    if (resource === 'events') return routeEvents(ctx, rest);
    if (resource === 'prescriptions') return routePrescriptions(ctx, rest);
    if (resource === 'subscriptions') return routeSubscriptions(ctx, rest);
    sendError(res, 404, `no route for ${url.pathname}`);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
    if (adminEnabled && isUnder(url.pathname, ADMIN_BASE_PATH)) {
      store.publishDue();
      return routeAdmin(req, res, url, { store, faults, advanceClock });
    }
    const served = versions.find((version) => isUnder(url.pathname, versionBasePath(version)));
    if (served !== undefined) return serveApi(req, res, url, served);
    sendError(res, 404, `no route for ${url.pathname}; the API lives under ${versions.map(versionBasePath).join(', ')}`);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // a sandbox bug must surface to the client as a 500, never crash the process
      if (!res.headersSent) sendError(res, 500, `sandbox error: ${error instanceof Error ? error.message : String(error)}`);
      else res.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const origin = `http://${hostForUrl}:${address.port}`;

  return {
    baseUrl: `${origin}${versionBasePath(store.defaultVersion)}`,
    versions,
    baseUrlFor: (version) => `${origin}${versionBasePath(version)}`,
    origin,
    port: address.port,
    credentials,
    clock,
    store,
    faults: () => ({ ...faults.config }),
    setFaults: (partial) => void faults.update(partial),
    hold: (rule) => {
      const hold = holds.add(rule);
      released.push(hold.release);
      return hold;
    },
    close: () => {
      closing = true;
      holds.releaseAll();
      for (const release of released) release();
      for (const timer of latencyTimers) clearTimeout(timer);
      latencyTimers.clear();
      closed ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // held (hang fault) and keep-alive sockets would otherwise keep close() waiting
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
