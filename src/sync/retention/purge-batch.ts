import { sql, type SQL } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import { sqlState } from '../../db/errors/sql-state.js';
import type { BatchOutcome } from './decisions.js';

export interface BatchOptions {
  /**
   * lock_timeout and statement_timeout of the batch's transaction: it never waits longer for a lock,
   * and never holds the locks it took longer than this (past it the server cancels and rolls back)
   */
  timeoutMs: number;
  /** count the sessions waiting on this batch's locks before committing (Postgres only) */
  detectWaiters: boolean;
}

// lock_not_available (lock_timeout) and query_canceled (statement_timeout)
const TIMEOUT_STATES = new Set(['55P03', '57014']);

/**
 * Runs one purge call (a `_purge` or `_purge_audit` select returning `n`) in a short transaction of
 * its own. Before committing it asks whether another session waits on a lock it holds (a page apply
 * replaying one of its rows): the batch commits at once either way, and says `contended` so the
 * caller backs off. A lock or statement timeout rolls the batch back and says `timed_out`.
 */
export async function runBatch(db: Db, call: SQL, maxRows: number, options: BatchOptions): Promise<BatchOutcome> {
  const timeout = `${Math.max(1, Math.floor(options.timeoutMs))}ms`;
  try {
    return await db.transaction(async (tx) => {
      await tx.execute(sql`select set_config('lock_timeout', ${timeout}, true), set_config('statement_timeout', ${timeout}, true)`);
      const [row] = await queryRows<{ n: unknown }>(tx, call);
      const rows = Number(row?.n ?? 0);
      let waiters = 0;
      if (options.detectWaiters) {
        const [waiting] = await queryRows<{ waiters: unknown }>(
          tx,
          sql`select count(*)::int as waiters from pg_stat_activity a
              where a.pid <> pg_backend_pid() and pg_backend_pid() = any (pg_blocking_pids(a.pid))`,
        );
        waiters = Number(waiting?.waiters ?? 0);
      }
      if (waiters > 0) return { kind: 'contended', rows };
      return rows < maxRows ? { kind: 'drained', rows } : { kind: 'full', rows };
    });
  } catch (error) {
    const state = sqlState(error);
    if (state !== undefined && TIMEOUT_STATES.has(state)) return { kind: 'timed_out' };
    throw error;
  }
}
