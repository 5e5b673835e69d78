import { sql } from 'drizzle-orm';
import { Gauge, type Registry } from 'prom-client';
import { queryRows } from '../db/connection.js';
import { withDeadline } from '../db/deadline.js';
import type { Database } from '../db/connection.js';
import { OVERDUE_STAGES } from '../store-api/overdue/stages.js';
import { SOURCE_DEADLINE_MS } from './metrics-provided-gauges.js';

/** Overdue prescriptions per feed and stage (one grouped read of overdue_prescriptions). */
export type OverdueSource = () => Promise<ReadonlyArray<{ feed: string; stage: string; count: number }>>;

export function overdueSource(database: Database): OverdueSource {
  const view = database.names.qualified('overdue_prescriptions');
  return async () => {
    const rows = await database.db.transaction(async (tx) => {
      // JIT off for this read: with statistics its estimated cost (1M prescriptions) passes
      // jit_above_cost, and compiling it cost ~20 ms of every scrape for ~5 ms of index reads
      // (bench:overdue). SET LOCAL, so it holds behind a transaction pooler too.
      await tx.execute(sql`set local jit = off`);
      return queryRows<{ feed: string; stage: string; count: unknown }>(
        tx,
        sql`select feed, stage, count(*)::float8 as count from ${view} group by feed, stage`,
      );
    });
    return rows.map((r) => ({ feed: r.feed, stage: r.stage, count: Number(r.count) }));
  };
}

/**
 * intake_sync_prescriptions_overdue{feed,stage}, read at scrape time: every stage of every feed
 * exists (0 when none), and a read that misses its deadline keeps the last values.
 */
export function registerOverdueMetric(registers: Registry[], feeds: readonly string[], source: OverdueSource | undefined): void {
  // registered without a source too (tests, `run` before the store opens): the series then stay absent
  new Gauge({
    name: 'intake_sync_prescriptions_overdue',
    help: 'Prescriptions past their stage deadline (OVERDUE_*), by feed and stage (docs/operations.md, "Overdue prescriptions")',
    labelNames: ['feed', 'stage'],
    registers,
    async collect() {
      if (!source) return;
      const rows = await withDeadline(source(), SOURCE_DEADLINE_MS, 'reading the overdue gauge').catch(() => undefined);
      if (!rows) return;
      for (const feed of feeds) for (const stage of OVERDUE_STAGES) this.set({ feed, stage }, 0);
      for (const r of rows) if (feeds.includes(r.feed)) this.set({ feed: r.feed, stage: r.stage }, r.count);
    },
  });
}
