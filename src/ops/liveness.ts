import type { WorkerSnapshot } from '../sync/state/worker-snapshot.js';

/** /healthz: alive unless the loop died — backing off, standby and a parked 401 are all alive. */
export function evaluateLiveness(snapshot: WorkerSnapshot): { alive: boolean; reason: string | null } {
  if (snapshot.loopAlive) return { alive: true, reason: null };
  return { alive: false, reason: `worker loop died: ${snapshot.loopDeathReason ?? 'unknown'}` };
}
