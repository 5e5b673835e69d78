import { startDelayProxy } from './delay-proxy.js';
import { runDrain, type DrainResult } from './drain.js';
import type { SandboxProcess } from './sandbox-process.js';
import { summarize, type Summary } from './stats.js';

/** A backlog drain with a round trip added to every request, against its fetch-bound limit. */
export interface WanResult {
  rtt_ms: number;
  events: number;
  pages: number;
  seconds: number;
  events_per_s: number;
  /** GET /events requests the drain made (the pages plus any final empty one) */
  requests: number;
  /** the operator's own time per request, measured at the proxy's upstream side (no added latency in it) */
  operator_ms: Summary;
  /**
   * per request, the proxy's view of network plus operator (request in from the worker to the answer's last
   * byte out to it): about rtt + operator_ms when the proxy delays accurately; the rest of each request's time
   * is the worker's own
   */
  wire_ms: Summary;
  /** per request after the first, the worker's own time from an answer's last byte to its next request */
  turnaround_ms: Summary;
  /**
   * the fastest any consumer can drain this feed over this network: each request needs the previous page's
   * iterator, so requests go one after another, each taking the round trip plus the operator's time:
   * events / (requests x (rtt + mean operator time))
   */
  limit_events_per_s: number;
  ratio_to_limit: number;
  /** TCP connections the worker opened to the operator during the drain */
  connections: number;
  /** requests made on each of them */
  requests_per_connection: number[];
  peak_rss_mb: number;
  per_page_ms: DrainResult['per_page_ms'];
}

/** Events (a multiple of 1,000: whole 250-event pages of 4-event histories) for a drain of about `seconds` at `rttMs`. */
export function wanEventsFor(rttMs: number, seconds: number): number {
  // the operator answers a page in ~3 ms here; the drain is sized on its limit, not measured with it
  const perSecond = (250 * 1000) / (rttMs + 3);
  return Math.max(1_000, Math.round((perSecond * seconds) / 1_000) * 1_000);
}

/** The feed a WAN drain consumes: its local prescriptions must be registered in it. */
export const wanFeed = (rttMs: number): string => `wan-${rttMs}`;

/**
 * Drains the (already seeded) sandbox feed into `databaseUrl` through a loopback proxy adding `rttMs` of
 * round trip (half each way) and one round trip per new connection, with the daemon's own worker
 * (runDrain). The proxy counts the worker's connections and times the operator's answers.
 */
export async function measureWan(
  workerEntry: string,
  sandbox: SandboxProcess,
  databaseUrl: string,
  rttMs: number,
  /** the worker's V8 flags; default the daemon's (DAEMON_NODE_FLAGS) */
  nodeFlags?: readonly string[],
): Promise<WanResult> {
  const upstream = new URL(sandbox.baseUrl);
  const proxy = await startDelayProxy(Number(upstream.port), rttMs);
  let drain: DrainResult;
  try {
    const viaProxy = new URL(sandbox.baseUrl);
    viaProxy.port = String(proxy.port);
    drain = await runDrain(
      workerEntry,
      { ...sandbox, baseUrl: viaProxy.toString().replace(/\/$/, '') },
      databaseUrl,
      wanFeed(rttMs),
      nodeFlags,
    );
  } finally {
    await proxy.close();
  }
  const stats = proxy.stats();
  const operator = summarize(stats.upstreamMs);
  const limit = (drain.events * 1000) / (stats.exchanges * (rttMs + operator.mean));
  return {
    rtt_ms: rttMs,
    events: drain.events,
    pages: drain.pages,
    seconds: drain.seconds,
    events_per_s: drain.events_per_s,
    requests: stats.exchanges,
    operator_ms: operator,
    wire_ms: summarize(stats.wireMs),
    turnaround_ms: summarize(stats.turnaroundMs),
    limit_events_per_s: limit,
    ratio_to_limit: drain.events_per_s / limit,
    connections: stats.connections,
    requests_per_connection: stats.exchangesPerConnection,
    peak_rss_mb: drain.peak_rss_mb,
    per_page_ms: drain.per_page_ms,
  };
}
