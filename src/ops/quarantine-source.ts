import { sql } from 'drizzle-orm';
import { queryRows, type Database } from '../db/connection.js';
import { QUARANTINE_REASONS, type QuarantineReason } from '../sync/matching/quarantine.js';
import type { QuarantineSource } from './metrics-provided-gauges.js';

/**
 * Reads the feed's open quarantine entries by reason for intake_sync_quarantine_open: one
 * grouped count on the partial index of open entries, in the deployment's schema.
 */
export function quarantineSource(database: Database, feed: string): QuarantineSource {
  const table = database.names.quarantine;
  return async () => {
    const rows = await queryRows<{ reason: string; open: number }>(
      database.db,
      sql`select reason, count(*)::int as open from ${table} where feed = ${feed}::text and resolved_at is null group by reason`,
    );
    const counts = Object.fromEntries(QUARANTINE_REASONS.map((reason) => [reason, 0])) as Record<QuarantineReason, number>;
    for (const row of rows) {
      if ((QUARANTINE_REASONS as readonly string[]).includes(row.reason)) counts[row.reason as QuarantineReason] = Number(row.open);
    }
    return counts;
  };
}
