import type { ConnectionProbe } from './connection-probe.js';

/**
 * How the daemon talks to Postgres once the URLs are probed. `pooled` switches the pool and the
 * page transactions to what a pooler allows (no startup parameters, no named prepared statements,
 * the idle-in-transaction timeout set per transaction); `sessionUrl` is where the feed lease (a
 * lease row held by this session's backend, drizzle/0017_lock_tables.sql) goes. Behind a pooler without LEASE_DATABASE_URL there is none:
 * commands that take no lease still work, `run` refuses with `noSession`.
 */
export interface SessionPlan {
  pooled: boolean;
  sessionUrl: string | undefined;
  /** why there is no session URL, as a problem to report */
  noSession?: SessionPlanProblem;
}

/** A variable to fix and what is wrong with it (never the URL itself: it may hold a password). */
export interface SessionPlanProblem {
  variable: 'DATABASE_URL' | 'LEASE_DATABASE_URL';
  message: string;
}

export interface SessionPlanInput {
  databaseUrl: string;
  database: ConnectionProbe;
  leaseUrl?: string | undefined;
  lease?: ConnectionProbe | undefined;
}

/** Decides the plan, or says what is wrong with LEASE_DATABASE_URL. Pure: the probes come in. */
export function planSessions(input: SessionPlanInput): { ok: true; plan: SessionPlan } | { ok: false; problems: SessionPlanProblem[] } {
  const { database, lease } = input;
  const pooled = database.transactionPooling || !database.acceptsStartupParameters;
  if (!input.leaseUrl || !lease) {
    if (!pooled) return { ok: true, plan: { pooled, sessionUrl: input.databaseUrl } };
    const why = database.transactionPooling
      ? `goes through a transaction-mode connection pooler (${database.evidence})`
      : 'goes through a connection pooler (it refused the session setting idle_in_transaction_session_timeout at connect)';
    const noSession: SessionPlanProblem = {
      variable: 'LEASE_DATABASE_URL',
      message:
        `is required: DATABASE_URL ${why}, where the feed lease (a session-bound lease row) would not hold and two ` +
        'workers could both apply pages. Set LEASE_DATABASE_URL to a direct postgres:// URL of the same database ' +
        '(not through the pooler); DATABASE_URL may stay on the pooler',
    };
    return { ok: true, plan: { pooled, sessionUrl: undefined, noSession } };
  }
  const problems: SessionPlanProblem[] = [];
  if (lease.transactionPooling || !lease.acceptsStartupParameters) {
    const why = lease.transactionPooling ? lease.evidence : 'it refused a session setting at connect';
    problems.push({ variable: 'LEASE_DATABASE_URL', message: `must be a direct connection to Postgres, not through a pooler (${why})` });
  }
  if (lease.database !== database.database || lease.serverStartedAt !== database.serverStartedAt) {
    problems.push({
      variable: 'LEASE_DATABASE_URL',
      message:
        `must reach the same database as DATABASE_URL (it reaches database "${lease.database}" on a server up since ${lease.serverStartedAt}; ` +
        `DATABASE_URL reaches "${database.database}" on a server up since ${database.serverStartedAt})`,
    });
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, plan: { pooled, sessionUrl: input.leaseUrl } };
}
