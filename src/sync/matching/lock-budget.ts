import { sql, type SQL } from 'drizzle-orm';
import { sqlState } from '../../db/errors/sql-state.js';
import { MatchLockBudgetError } from './errors/match-lock-budget-error.js';

/**
 * How long one statement may run while its transaction holds the exclusive match lock (a
 * registration or rematch batch): page applies wait behind it, so the feed never stalls longer
 * than this for one batch (issue 26: a batch planned badly held pages for the session's 60 s).
 */
export const MATCH_LOCK_BUDGET_MS = 2_000;

// query_canceled: statement_timeout (or an operator's pg_cancel_backend, which a smaller retry also survives)
const QUERY_CANCELED = '57014';

/** What a batch that ran out of its budget does next: retry its two halves, or stop (one item alone). */
export type BudgetStep = { kind: 'halve'; first: number; second: number } | { kind: 'give-up' };

/** The decision after a batch of `size` items exceeded its statement budget. */
export function afterBudgetExceeded(size: number): BudgetStep {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`batch size must be a positive integer, got ${size}`);
  if (size === 1) return { kind: 'give-up' };
  const first = Math.ceil(size / 2);
  return { kind: 'halve', first, second: size - first };
}

/**
 * The size of the next batch: after a round that had to halve, the smallest size that committed in
 * it (the data around here is slow); after a clean round, twice the last size, never above `max`.
 */
export function nextBatchSize(max: number, last: number, smallestCommitted: number | undefined): number {
  if (smallestCommitted !== undefined && smallestCommitted < last) return Math.max(1, smallestCommitted);
  return Math.min(max, Math.max(1, last * 2));
}

/** True when the error is a statement cancelled by its timeout. */
export const exceededBudget = (error: unknown): boolean => sqlState(error) === QUERY_CANCELED;

/**
 * Sets the statement budget for the rest of the transaction; sent after the match lock is held, so
 * waiting for the lock (page applies in flight, bounded by lock_timeout) is not counted against it.
 */
export const matchLockBudgetSql = (budgetMs: number): SQL =>
  sql`select set_config('statement_timeout', ${String(Math.max(1, Math.round(budgetMs)))}, true)`;

export interface BudgetRun<T> {
  /** budget of each statement, for the error's message */
  budgetMs: number;
  /** called when a batch of `size` exceeded its budget and is retried in two halves */
  onHalve?: ((size: number) => void) | undefined;
  /** names the single item that still exceeded the budget alone (an identifier, never PHI) */
  describe: (item: T) => string | Promise<string>;
}

/**
 * Runs `run` over `items` as one batch; a batch that exceeds its statement budget (its transaction
 * rolled back) is retried as two halves, recursively, down to one item, which then fails with a
 * MatchLockBudgetError naming it. Returns the smallest batch size that committed.
 */
export async function runWithinBudget<T>(
  items: readonly T[],
  run: (batch: readonly T[]) => Promise<void>,
  options: BudgetRun<T>,
): Promise<number> {
  if (items.length === 0) return 0;
  try {
    await run(items);
    return items.length;
  } catch (error) {
    if (!exceededBudget(error)) throw error;
    const step = afterBudgetExceeded(items.length);
    if (step.kind === 'give-up') {
      const [item] = items as [T];
      throw new MatchLockBudgetError(await options.describe(item), options.budgetMs, { cause: error });
    }
    options.onHalve?.(items.length);
    const first = await runWithinBudget(items.slice(0, step.first), run, options);
    const second = await runWithinBudget(items.slice(step.first), run, options);
    return Math.min(first, second);
  }
}
