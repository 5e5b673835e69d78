import { and, count, eq, isNull } from 'drizzle-orm';
import type { Db } from '../db/connection.js';
import { quarantine } from '../db/schema.js';
import { QUARANTINE_REASONS, type QuarantineReason } from '../sync/quarantine.js';
import type { QuarantineSource } from './metrics-provided-gauges.js';

/**
 * Reads the feed's open quarantine entries by reason for intake_sync_quarantine_open. Built
 * with the query builder on the schema's table object, so it follows the table wherever the
 * schema puts it. One grouped count on the partial index of open entries.
 */
export function quarantineSource(db: Db, feed: string): QuarantineSource {
  return async () => {
    const rows = await db
      .select({ reason: quarantine.reason, open: count() })
      .from(quarantine)
      .where(and(eq(quarantine.feed, feed), isNull(quarantine.resolvedAt)))
      .groupBy(quarantine.reason);
    const counts = Object.fromEntries(QUARANTINE_REASONS.map((reason) => [reason, 0])) as Record<QuarantineReason, number>;
    for (const row of rows) {
      if ((QUARANTINE_REASONS as readonly string[]).includes(row.reason)) counts[row.reason as QuarantineReason] = Number(row.open);
    }
    return counts;
  };
}
