import { connectingTo } from './connect-failure.js';
import { probeConnection } from './connection-probe.js';
import { planSessions, type SessionPlan, type SessionPlanProblem } from './session-plan.js';

/**
 * Probes DATABASE_URL (and LEASE_DATABASE_URL when set) and plans the sessions; problems name the variable
 * to fix. The first connection of every command: one that cannot connect names the variable and host.
 */
export async function probeSessions(
  databaseUrl: string,
  leaseUrl: string | undefined,
  caFile?: string | undefined,
): Promise<{ plan: SessionPlan } | { problems: SessionPlanProblem[] }> {
  const [database, lease] = await Promise.all([
    connectingTo('DATABASE_URL', databaseUrl, () => probeConnection(databaseUrl, { variable: 'DATABASE_URL', caFile })),
    leaseUrl
      ? connectingTo('LEASE_DATABASE_URL', leaseUrl, () => probeConnection(leaseUrl, { variable: 'LEASE_DATABASE_URL', caFile }))
      : undefined,
  ]);
  const decided = planSessions({ databaseUrl, database, leaseUrl, lease });
  return decided.ok ? { plan: decided.plan } : { problems: decided.problems };
}
