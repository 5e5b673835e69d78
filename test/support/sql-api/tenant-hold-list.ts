import type postgres from 'postgres';
import { API_VIEWS } from '../../../src/db/grants.js';
import { identityOf, samplePrescription } from '../../../src/sandbox/fixtures.js';

// Issue 33 §1: every way found for an app role to hold something in a transaction it leaves open.
// Shared by the SQL-level test (test/sql-api/locks/tenant-holds.test.ts: another feed's app and status
// commits) and the console's (test/console/resolve-under-tenant-hold.test.ts: another feed's Resolve
// over HTTP), so both attack with the same list.

/** One hold: its name and the statements the holder runs (`round` keeps each run's rows distinct). */
export interface TenantHold {
  name: string;
  statements(round: number): string[];
}

/** The prescription `n` of `feed`, as the holds and the probes make them. */
export const holdRx = (n: number, feed: string) => samplePrescription(n, { prefix: feed });

/**
 * The holds of an app role of `feed`. They expect `feed` to have held events matching
 * holdRx(100..139) (each registration then changes a status, so its commit is stamped) and a
 * prescription holdRx(9000) with a status (to cancel).
 */
export function tenantHolds(feed: string): TenantHold[] {
  const register = (k: number) => {
    const p = holdRx(100 + k, feed);
    return `select intake_sync.register_prescription('${p.external_id}', $j$${JSON.stringify(identityOf(p))}$j$::jsonb, '${feed}')`;
  };
  const send = (k: number) => {
    const p = holdRx(200 + k, feed);
    return `select intake_sync.send_prescription($j$${JSON.stringify(p)}$j$::jsonb, '${feed}')`;
  };
  return [
    {
      name: 'register_prescription, then SET CONSTRAINTS ALL IMMEDIATE',
      statements: (n) => [register(n), 'set constraints all immediate'],
    },
    { name: 'send_prescription, then SET CONSTRAINTS ALL IMMEDIATE', statements: (n) => [send(n), 'set constraints all immediate'] },
    {
      name: 'cancel_prescription, then SET CONSTRAINTS ALL IMMEDIATE',
      statements: () => [
        `select intake_sync.cancel_prescription('${holdRx(9_000, feed).external_id}', '${feed}')`,
        'set constraints all immediate',
      ],
    },
    {
      name: 'triage (request_reveal, resolve_quarantined, dismiss_quarantined), then SET CONSTRAINTS ALL IMMEDIATE',
      statements: () => [`select intake_sync.request_reveal('no-such-event', '${feed}')`, 'set constraints all immediate'],
    },
    {
      name: `${feed}'s match lock (resolve on a missing finding after taking it), then SET CONSTRAINTS ALL IMMEDIATE`,
      statements: () => [
        'savepoint s',
        `select intake_sync.resolve_quarantined('no-such-event', '${holdRx(9_000, feed).external_id}', '${feed}')`,
        'rollback to savepoint s',
        `select intake_sync.dismiss_quarantined('no-such-event', 'not_ours', '${feed}', true)`,
      ],
    },
    {
      name: 'FOR UPDATE and FOR SHARE on every view granted to apps',
      statements: () =>
        API_VIEWS.flatMap((view) => [
          'savepoint v',
          `select 1 from intake_sync.${view} for update`,
          'rollback to savepoint v',
          'savepoint v',
          `select 1 from intake_sync.${view} for share`,
          'rollback to savepoint v',
        ]),
    },
    {
      name: 'advisory locks (session and transaction level, a spread of keys)',
      statements: () => [
        'select pg_advisory_lock(k) from generate_series(0, 63) k',
        'select pg_advisory_xact_lock(k::int, j::int) from generate_series(7300, 7310) k, generate_series(-3, 3) j',
        `select pg_advisory_lock(hashtext('intake_sync'))`,
      ],
    },
    {
      name: 'everything at once: register, the other writers, SET CONSTRAINTS ALL IMMEDIATE, then an error left unrolled',
      statements: (n) => [register(20 + n), send(20 + n), 'set constraints all immediate', 'select 1/0'],
    },
  ];
}

/**
 * Runs `statements` in `session` (the holder) in a transaction left open (each error kept as its
 * outcome: the transaction stays open, aborted, still holding what it took), runs `probe` with the
 * holder's backend pid, then rolls the transaction back. Returns each statement's outcome.
 */
export async function whileHeld(
  session: postgres.Sql,
  statements: string[],
  probe: (holderPid: number) => Promise<void>,
): Promise<string[]> {
  const outcomes: string[] = [];
  const rolledBack = new Error('rolled back on purpose');
  await session
    .begin(async (tx) => {
      const [me] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
      for (const statement of statements) {
        outcomes.push(
          await tx.unsafe(statement).then(
            () => `ok ${statement}`,
            (error: { code?: string }) => `${error.code ?? 'error'} ${statement}`,
          ),
        );
      }
      await probe(me?.pid ?? -1);
      throw rolledBack;
    })
    .catch((error: unknown) => {
      if (error !== rolledBack) throw error;
    });
  return outcomes;
}
