import { attributionOf } from '../../db/audit.js';
import { performance } from 'node:perf_hooks';
import { sql, type SQL } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import type { StoreNames } from '../../db/store-names.js';
import type { LoopSleep } from '../../lib/loop-sleep.js';
import { nextBatch, retentionCutoffs, type BatchLimits, type BatchOutcome } from './decisions.js';
import { runBatch } from './purge-batch.js';
import { RETENTION_CLASSES, zeroCounts, type RetentionClass, type RetentionCounts, type RetentionPolicy } from './retention-classes.js';

/** What one feed keeps, and (for the audit rows no feed owns) the deployment's RETAIN_AUDIT. */
export interface PurgeTarget {
  feed: string;
  policy: RetentionPolicy;
  /** RETAIN_AUDIT for audit rows without a feed; undefined: this pass leaves them alone */
  unscopedAuditMs?: number | null | undefined;
}

export interface BatchSettings {
  /** rows of the first batch of each class */
  initialRows: number;
  limits: BatchLimits;
  /** lock_timeout and statement_timeout of each batch */
  timeoutMs: number;
  /** count the sessions a batch blocks before it commits (Postgres; not the embedded store) */
  detectWaiters: boolean;
}

export interface PassContext {
  db: Db;
  /** taken from the root handle (namesOf) */
  names: StoreNames;
  /** ms since the epoch: the injected clock's now */
  now: number;
  batch: BatchSettings;
  sleep: LoopSleep;
  signal: AbortSignal;
  /** told after every committed batch (the purged-rows counter) */
  onPurged?: ((cls: RetentionClass, rows: number) => void) | undefined;
  /** told how every batch ended, with its size and duration (logs, the lock test) */
  onBatch?: ((cls: RetentionClass, outcome: BatchOutcome, rows: number, durationMs: number) => void) | undefined;
}

export interface PassResult {
  counts: RetentionCounts;
  /** false when a class was left for the next pass (repeated contention or timeouts, or a stop) */
  complete: boolean;
}

/** One `_purge`/`_purge_identities`/`_purge_audit` call of at most `rows` rows. */
function purgeCall(n: StoreNames, cls: RetentionClass, feed: string | null, cutoff: Date, rows: number): SQL {
  if (cls === 'terminal_identities')
    return sql`select ${n.qualified('_purge_identities')}(${feed}::text, ${cutoff.toISOString()}::timestamptz, ${rows}::int) as n`;
  if (cls === 'audit')
    return sql`select ${n.qualified('_purge_audit')}(${feed}::text, ${cutoff.toISOString()}::timestamptz, ${rows}::int) as n`;
  return sql`select ${n.qualified('_purge')}(${cls}::text, ${feed}::text, ${cutoff.toISOString()}::timestamptz, ${rows}::int) as n`;
}

/**
 * One pass over every class of one feed: batch after batch until nothing more is due at the pass's
 * cutoffs, backing off when page applies wait on a batch or a batch times out (see nextBatch).
 */
export async function purgePass(target: PurgeTarget, context: PassContext): Promise<PassResult> {
  const cutoffs = retentionCutoffs(target.policy, context.now);
  const counts = zeroCounts();
  let complete = true;
  const scopes: { cls: RetentionClass; feed: string | null; cutoff: Date }[] = [];
  for (const cls of RETENTION_CLASSES) {
    const cutoff = cutoffs[cls];
    if (cutoff) scopes.push({ cls, feed: target.feed, cutoff });
  }
  if (target.unscopedAuditMs !== undefined && target.unscopedAuditMs !== null) {
    scopes.push({ cls: 'audit', feed: null, cutoff: new Date(context.now - target.unscopedAuditMs) });
  }
  for (const scope of scopes) {
    let rows = context.batch.initialRows;
    let streak = 0;
    for (;;) {
      if (context.signal.aborted) return { counts, complete: false };
      const started = performance.now();
      const outcome = await runBatch(context.db, purgeCall(context.names, scope.cls, scope.feed, scope.cutoff, rows), rows, {
        timeoutMs: context.batch.timeoutMs,
        detectWaiters: context.batch.detectWaiters,
      });
      context.onBatch?.(scope.cls, outcome, rows, performance.now() - started);
      if (outcome.kind !== 'timed_out' && outcome.rows > 0) {
        counts[scope.cls] += outcome.rows;
        context.onPurged?.(scope.cls, outcome.rows);
      }
      const next = nextBatch(outcome, rows, streak, context.batch.limits);
      if (!next.again) {
        if (next.streak > 0 || outcome.kind === 'timed_out') complete = false;
        break;
      }
      rows = next.rows;
      streak = next.streak;
      if (next.delayMs > 0) await context.sleep(next.delayMs, context.signal);
    }
  }
  return { counts, complete };
}

/** `purge --dry-run`: per class, how many rows a pass at `now` would remove. Writes nothing. */
export async function purgeDue(db: Db, n: StoreNames, target: PurgeTarget, now: number): Promise<RetentionCounts> {
  const cutoffs = retentionCutoffs(target.policy, now);
  const counts = zeroCounts();
  for (const cls of RETENTION_CLASSES) {
    const cutoff = cutoffs[cls];
    if (!cutoff) continue;
    const call =
      cls === 'audit'
        ? sql`select ${n.qualified('_purge_audit')}(${target.feed}::text, ${cutoff.toISOString()}::timestamptz, 1, true) as n`
        : cls === 'terminal_identities'
          ? sql`select ${n.qualified('_purge_identities')}(${target.feed}::text, ${cutoff.toISOString()}::timestamptz, 1, true) as n`
          : sql`select ${n.qualified('_purge_due')}(${cls}::text, ${target.feed}::text, ${cutoff.toISOString()}::timestamptz) as n`;
    const [row] = await queryRows<{ n: unknown }>(db, call);
    counts[cls] = Number(row?.n ?? 0);
  }
  if (target.unscopedAuditMs !== undefined && target.unscopedAuditMs !== null) {
    const cutoff = new Date(now - target.unscopedAuditMs).toISOString();
    const [row] = await queryRows<{ n: unknown }>(
      db,
      sql`select ${n.qualified('_purge_audit')}(null, ${cutoff}::timestamptz, 1, true) as n`,
    );
    counts.audit += Number(row?.n ?? 0);
  }
  return counts;
}

/**
 * Records a completed pass (retention_runs: the last-run metric) and, when it removed anything, the
 * audit row `purge.run` with its counts, attributed to `onBehalfOf` (the CLI's user@host, the cleaner's
 * name); `alwaysAudit`: also when it removed nothing (an operator's `intake-sync purge`).
 */
export async function recordPass(
  db: Db,
  n: StoreNames,
  feed: string,
  counts: RetentionCounts,
  onBehalfOf: string,
  alwaysAudit = false,
): Promise<void> {
  await db.execute(
    sql`select ${n.qualified('_purge_ran')}(${feed}::text, ${JSON.stringify(counts)}::jsonb, ${attributionOf(onBehalfOf)}::text, ${alwaysAudit}::boolean)`,
  );
}
