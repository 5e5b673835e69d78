import { insertFillerPrescriptions } from './filler-prescriptions.js';
import type { BenchDatabase } from './database.js';
import { runDrain } from './drain.js';
import { registerFixturePrescriptions } from './register.js';
import type { SandboxProcess } from './sandbox-process.js';
import type { Summary } from './stats.js';

/**
 * Per-page match time of the same feed against a small and a large local prescription table. Matching
 * runs inside the page statement, so what is compared is that statement's time (match + writes).
 */
export interface MatchScalingResult {
  probe_events: number;
  match_ms_per_page_10k: Summary;
  match_ms_per_page_1m: Summary;
}

const SMALL = 10_000;
const PROBE_PREFIX = 'probe';
const FEED = 'match';

/**
 * Seeds `probePrescriptions` (at most SMALL) into the sandbox, registers them (production path) plus
 * set-based fillers up to SMALL local prescriptions, all in one feed, drains it; then grows that feed's table
 * to `largeTable` with fillers, clears the applied history and the feed's checkpoint, and drains it again.
 * Every local prescription is in the drained feed: the match indexes lead with the feed, so prescriptions
 * of another feed would neither match nor deepen the lookups being measured.
 */
export async function measureMatchScaling(
  workerEntry: string,
  sandbox: SandboxProcess,
  bench: BenchDatabase,
  probePrescriptions: number,
  largeTable: number,
): Promise<MatchScalingResult> {
  const seeded = await sandbox.seed(probePrescriptions, PROBE_PREFIX);
  await registerFixturePrescriptions(bench.database.db, PROBE_PREFIX, 0, probePrescriptions, FEED);
  await insertFillerPrescriptions(bench.sql, 'filler', 1, SMALL - probePrescriptions, FEED);
  // flush the bulk load's dirty pages first, so neither drain shares the disk with a checkpoint of the inserts
  await bench.sql`checkpoint`;
  const small = await runDrain(workerEntry, sandbox, bench.url, FEED);
  await insertFillerPrescriptions(bench.sql, 'filler', SMALL - probePrescriptions + 1, largeTable - probePrescriptions, FEED);
  await bench.sql`truncate intake_sync.events, intake_sync.quarantine, intake_sync.status_changes`;
  // the feed starts over from the beginning of the sandbox feed
  await bench.sql`delete from intake_sync.feed_checkpoints where feed = ${FEED}`;
  await bench.sql`update intake_sync.prescriptions set status = null, status_rank = 0, status_occurred_at = null, status_event_id = null
                  where status is not null`;
  await bench.sql`vacuum analyze intake_sync.prescriptions`;
  await bench.sql`checkpoint`;
  const large = await runDrain(workerEntry, sandbox, bench.url, FEED);
  return { probe_events: seeded.events, match_ms_per_page_10k: small.per_page_ms.write, match_ms_per_page_1m: large.per_page_ms.write };
}
