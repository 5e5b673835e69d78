import type { Database } from '../db/connection.js';
import { openFindingsByReason } from '../store-api/triage/open-findings-by-reason.js';
import type { QuarantineSource } from './metrics-provided-gauges.js';

/** Reads the feed's open quarantine entries by reason for intake_sync_quarantine_open, in the deployment's schema. */
export function quarantineSource(database: Database, feed: string): QuarantineSource {
  return () => openFindingsByReason(database.db, feed);
}
