import { describe, expect, it } from 'vitest';
import type { ConnectionProbe } from '../../src/db/connection-probe.js';
import { planSessions } from '../../src/db/session-plan.js';

const direct: ConnectionProbe = {
  acceptsStartupParameters: true,
  transactionPooling: false,
  evidence: 'one connection kept one server session',
  database: 'app',
  serverStartedAt: 'T1',
};
const transactionPooler: ConnectionProbe = {
  ...direct,
  acceptsStartupParameters: false,
  transactionPooling: true,
  evidence: 'the server session changed (pid 1, then 2)',
};
const sessionPooler: ConnectionProbe = { ...direct, acceptsStartupParameters: false };
const DB = 'postgres://app@pooler:6432/app';
const LEASE = 'postgres://app@db:5432/app';

describe('planSessions', () => {
  it.each([
    { name: 'direct, no lease URL: everything on DATABASE_URL', input: { database: direct }, plan: { pooled: false, sessionUrl: DB } },
    {
      name: 'direct with a lease URL: locks on the lease URL',
      input: { database: direct, leaseUrl: LEASE, lease: direct },
      plan: { pooled: false, sessionUrl: LEASE },
    },
    {
      name: 'transaction pooler + direct lease URL',
      input: { database: transactionPooler, leaseUrl: LEASE, lease: direct },
      plan: { pooled: true, sessionUrl: LEASE },
    },
    {
      name: 'session pooler + direct lease URL',
      input: { database: sessionPooler, leaseUrl: LEASE, lease: direct },
      plan: { pooled: true, sessionUrl: LEASE },
    },
  ])('$name', ({ input, plan }) => {
    expect(planSessions({ databaseUrl: DB, ...input })).toEqual({ ok: true, plan });
  });

  it.each([
    {
      name: 'transaction pooler',
      input: { database: transactionPooler },
      problem: /is required: DATABASE_URL goes through a transaction-mode connection pooler \(the server session changed/,
    },
    {
      name: 'session pooler refusing startup parameters',
      input: { database: sessionPooler },
      problem: /is required: DATABASE_URL goes through a connection pooler \(it refused/,
    },
  ])('pooled without a lease URL: no session URL, and what to configure for run ($name)', ({ input, problem }) => {
    const result = planSessions({ databaseUrl: DB, ...input });
    expect(result.ok && result.plan.pooled && result.plan.sessionUrl === undefined).toBe(true);
    const noSession = result.ok ? result.plan.noSession : undefined;
    expect(noSession?.variable).toBe('LEASE_DATABASE_URL');
    expect(noSession?.message).toMatch(problem);
    expect(noSession?.message).not.toContain('pooler:6432');
  });

  it.each([
    {
      name: 'lease URL through the pooler too',
      input: { database: transactionPooler, leaseUrl: DB, lease: transactionPooler },
      problem: /LEASE_DATABASE_URL.*must be a direct connection/,
    },
    {
      name: 'lease URL to another database',
      input: { database: transactionPooler, leaseUrl: LEASE, lease: { ...direct, database: 'other' } },
      problem: /must reach the same database as DATABASE_URL \(it reaches database "other"/,
    },
    {
      name: 'lease URL to another server',
      input: { database: direct, leaseUrl: LEASE, lease: { ...direct, serverStartedAt: 'T2' } },
      problem: /must reach the same database/,
    },
  ])('refuses: $name', ({ input, problem }) => {
    const result = planSessions({ databaseUrl: DB, ...input });
    expect(result.ok).toBe(false);
    const text = result.ok ? '' : result.problems.map((p) => `${p.variable}: ${p.message}`).join('\n');
    expect(text).toMatch(problem);
    // URLs may carry passwords: never in the message
    expect(text).not.toContain('pooler:6432');
    expect(text).not.toContain('db:5432');
  });
});
