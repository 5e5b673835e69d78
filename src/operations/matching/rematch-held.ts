import { performance } from 'node:perf_hooks';
import { sql, type SQL } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import { namesOf, type StoreNames } from '../../db/store-names.js';
import { traceContextSql } from '../../db/trace-context.js';
import { MATCH_LOCK_BUDGET_MS, matchLockBudgetSql, nextBatchSize, runWithinBudget } from '../../sync/matching/lock-budget.js';
import { matchLockExclusive } from '../../sync/matching/match-lock.js';
import { addRematch, type RematchResult, rematchKeys } from '../../sync/matching/rematch.js';
import { inSpan, setAttributes } from '../../telemetry/spans.js';

// `quarantine rematch`: every held event of a feed (or of every feed) matched again against the local
// prescriptions, in batches of identity keys, each its own short transaction under the match lock.

/** One committed batch of a batched rematch: its counts and how long it held the match lock. */
export interface RematchBatch extends RematchResult {
  /** 1-based */
  batch: number;
  /** identity keys of held events this batch re-evaluated */
  keys: number;
  /** waiting for the exclusive match lock (page applies in flight finish first) */
  lockWaitMs: number;
  /** from holding the lock to commit: how long page applies waited on this batch */
  lockHeldMs: number;
}

export interface BatchedRematchOptions {
  /** only this feed's held events; every feed's when absent */
  feed?: string | undefined;
  /** distinct identity keys per batch (each batch one short transaction) */
  batchSize?: number;
  /** called after each committed batch (progress) */
  onBatch?: (batch: RematchBatch) => void;
  /** statement budget of each batch while it holds the match lock (MATCH_LOCK_BUDGET_MS) */
  budgetMs?: number;
  /** a batch of `keys` identity keys exceeded its budget and is retried in two halves */
  onHalve?: (keys: number) => void;
}

/**
 * Identity keys per rematch batch (about 4 held events each). Measured with 100,000 held events and a
 * daemon draining beside it (docs/performance.md): a batch holds the exclusive match lock for tens of
 * milliseconds. At 2,000 keys the planner turned the held-event lookup into scans of events and
 * quarantine, and a batch held the lock for over a second on a loaded machine.
 */
export const REMATCH_BATCH_KEYS = 500;

const zero = (): RematchResult => ({ examined: 0, matched: 0, stillUnmatched: 0, stillAmbiguous: 0 });

/**
 * The next `limit` distinct identity keys of held events (no prescription) after `after`, in key
 * order, read without any lock: the partial index events_held_identity_key_idx walks them. Each held
 * event has one identity key, so walking keys visits each held event in exactly one batch.
 */
export async function nextHeldKeys(
  db: Pick<Db, 'transaction'>,
  names: StoreNames,
  feed: string | null,
  after: string | null,
  limit: number,
): Promise<string[]> {
  const rows = await db.transaction(async (tx) => {
    // a bitmap scan would read every key after `after` and sort them: with the index scan the walk stops at `limit`
    await tx.execute(sql`select set_config('enable_bitmapscan', 'off', true)`);
    return queryRows<{ identity_key: string }>(tx, nextHeldKeysSql(names, feed, after, limit));
  });
  return rows.map((r) => r.identity_key);
}

/**
 * The statement of nextHeldKeys (its plan is checked on tables without statistics). The feed filter
 * stays outside the walk (OFFSET 0): inside, an empty table's estimates made the planner walk the
 * held events of the whole feed by another index and sort them (issue 26).
 */
export const nextHeldKeysSql = (names: StoreNames, feed: string | null, after: string | null, limit: number): SQL =>
  sql`select distinct h.identity_key from (
        select e.identity_key, e.feed from ${names.events} e
        where e.prescription_id is null and (${after}::text is null or e.identity_key > ${after}::text)
        order by e.identity_key
        offset 0
      ) h
      where ${feed}::text is null or h.feed = ${feed}::text
      order by h.identity_key
      limit ${limit}::int`;

/** The held event ids of one identity key (at most five), to name it in an error without its PHI. */
async function heldEventsOf(db: Db, names: StoreNames, feed: string | null, key: string): Promise<string> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`select e.id from ${names.events} e
        where e.identity_key = ${key}::text and e.prescription_id is null and (${feed}::text is null or e.feed = ${feed}::text)
        order by e.id limit 5`,
  );
  return `the rematch of one identity key (held events ${rows.map((r) => r.id).join(', ') || 'none left'})`;
}

/**
 * Re-evaluates every open unmatched/ambiguous finding (of one feed, or of every feed) against the
 * local prescriptions in batches of identity keys, each batch its own transaction holding the
 * exclusive match lock only while rematch_held() (sql/current-schema.sql) runs over it: page
 * applies go on between batches. Each batch runs under a statement budget (MATCH_LOCK_BUDGET_MS):
 * one that exceeds it rolls back and is retried in halves (lock-budget.ts), and the next batches
 * start at the size that committed. Single matches link their event, advance the prescription's
 * status (never backwards) and close the finding as 'matched'; the rest keep or change their reason.
 * A batch that fails leaves the batches before it committed (a rerun continues: they are matched).
 */
export function rematch(db: Db, options: BatchedRematchOptions = {}): Promise<RematchResult> {
  const attributes = { 'intake_sync.task': 'rematch', ...(options.feed ? { 'intake_sync.feed': options.feed } : {}) };
  return inSpan('intake_sync.rematch', { attributes }, async (span) => {
    const total = await rematchInBatches(db, options);
    setAttributes(span, {
      'intake_sync.rematch.examined': total.examined,
      'intake_sync.rematch.matched': total.matched,
      'intake_sync.rematch.still_held': total.stillUnmatched + total.stillAmbiguous,
    });
    return total;
  });
}

async function rematchInBatches(db: Db, options: BatchedRematchOptions): Promise<RematchResult> {
  const names = namesOf(db);
  const feed = options.feed ?? null;
  const maxSize = options.batchSize ?? REMATCH_BATCH_KEYS;
  const budgetMs = options.budgetMs ?? MATCH_LOCK_BUDGET_MS;
  const total = zero();
  let after: string | null = null;
  let batch = 0;
  let size = maxSize;
  for (;;) {
    const keys = await nextHeldKeys(db, names, feed, after, size);
    if (keys.length === 0) break;
    after = keys[keys.length - 1] ?? null;
    const smallest = await runWithinBudget(
      keys,
      async (part) => {
        const started = performance.now();
        let locked = started;
        const result = await db.transaction(async (tx) => {
          // taken here (rematch_held takes it again, re-entrantly) so the hold time can be measured
          await tx.execute(sql`select 1 from (select ${matchLockExclusive(names, feed)}) as match_lock`);
          locked = performance.now();
          await tx.execute(matchLockBudgetSql(budgetMs));
          // the status changes it makes carry the rematch's trace (src/db/trace-context.ts)
          const traced = traceContextSql();
          if (traced) await tx.execute(traced);
          return rematchKeys(tx, names, part, [], feed);
        });
        const committed = performance.now();
        addRematch(total, result);
        batch += 1;
        options.onBatch?.({ ...result, batch, keys: part.length, lockWaitMs: locked - started, lockHeldMs: committed - locked });
      },
      { budgetMs, onHalve: options.onHalve, describe: (key) => heldEventsOf(db, names, feed, key) },
    );
    if (keys.length < size) break;
    size = nextBatchSize(maxSize, size, smallest);
  }
  return total;
}
