import type { WorkerRole, WorkerSnapshot } from '../sync/state/worker-snapshot.js';
import { evaluateLiveness } from './liveness.js';
import { evaluateReadiness, type ReadinessThresholds } from './readiness.js';

/** One feed of this process as health sees it: its name and a PHI-free copy of its state. */
export interface FeedSnapshot {
  feed: string;
  snapshot: WorkerSnapshot;
}

/** One feed's line in the /readyz and /healthz bodies. */
export interface FeedHealthDetail {
  status: 'ready' | 'not ready';
  role: WorkerRole;
  reasons: string[];
  consecutive_failures: number;
  last_success_at: string | null;
  /** during and after an API version migration: the feed's operator sources by version and state */
  sources?: Array<{ api_version: string; state: string }>;
}

export interface ProcessReadiness {
  ready: boolean;
  /** the process's role: a single feed's, else leader when it leads any feed */
  role: WorkerRole;
  /** PHI-free lines; with several feeds each feed's are prefixed `feed NAME: ` */
  reasons: string[];
  feeds: Record<string, FeedHealthDetail>;
}

/**
 * /readyz over every feed of the process: ready when the database answers and every feed is ready.
 * A feed's reasons name it (`feed east: stopped consuming: 401`) when there are several, so one
 * failing account is told apart from the others, which go on consuming. Pure.
 */
export function evaluateFeedsReadiness(
  feeds: readonly FeedSnapshot[],
  databaseReachable: boolean,
  thresholds: ReadinessThresholds,
  now: number,
): ProcessReadiness {
  const several = feeds.length > 1;
  const reasons: string[] = databaseReachable ? [] : ['database unreachable'];
  const detail: Record<string, FeedHealthDetail> = {};
  for (const { feed, snapshot } of feeds) {
    // the database is one for all feeds: said once above, not once per feed
    const own = evaluateReadiness(snapshot, true, thresholds, now);
    detail[feed] = {
      status: own.ready ? 'ready' : 'not ready',
      role: snapshot.role,
      reasons: own.reasons,
      consecutive_failures: snapshot.consecutiveFailures,
      last_success_at: snapshot.lastSuccessAt === null ? null : new Date(snapshot.lastSuccessAt).toISOString(),
      ...(snapshot.sources.length > 0 ? { sources: snapshot.sources.map((s) => ({ api_version: s.apiVersion, state: s.state })) } : {}),
    };
    reasons.push(...own.reasons.map((reason) => (several ? `feed ${feed}: ${reason}` : reason)));
  }
  return { ready: reasons.length === 0, role: processRole(feeds.map((f) => f.snapshot.role)), reasons, feeds: detail };
}

/**
 * /healthz over every feed: alive unless a feed's loop died (an unexpected error only a restart
 * cures); a 401 or a stopped cursor is a feed's own state, alive, and shows in /readyz.
 */
export function evaluateFeedsLiveness(feeds: readonly FeedSnapshot[]): { alive: boolean; reasons: string[] } {
  const several = feeds.length > 1;
  const reasons: string[] = [];
  for (const { feed, snapshot } of feeds) {
    const { reason } = evaluateLiveness(snapshot);
    if (reason !== null) reasons.push(several ? `feed ${feed}: ${reason}` : reason);
  }
  return { alive: reasons.length === 0, reasons };
}

/** One role for the process: the single feed's; with several, the "most active" of them. */
export function processRole(roles: readonly WorkerRole[]): WorkerRole {
  for (const role of ['leader', 'standby', 'starting'] as const) if (roles.includes(role)) return role;
  return 'stopped';
}
