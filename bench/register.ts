import type { Db } from '../src/db/connection.js';
import { identityOf, samplePrescription } from '../src/sandbox/fixtures.js';
import { REGISTER_BATCH_SIZE, registerLocalPrescriptions } from '../src/sync/matching/local-prescriptions.js';

/**
 * Registers, through the production path, the local prescriptions matching sandbox fixtures
 * `prefix`-from..to-1 (seeded prescription i is samplePrescription(i, { prefix })), a batch at a time,
 * in `feed`: local prescriptions belong to a feed and only that feed's events match them, so this
 * must be the feed the drain consumes (else every event is quarantined unmatched).
 */
export async function registerFixturePrescriptions(db: Db, prefix: string, from: number, to: number, feed: string): Promise<void> {
  for (let start = from; start < to; start += REGISTER_BATCH_SIZE) {
    const rows = [];
    for (let i = start; i < Math.min(to, start + REGISTER_BATCH_SIZE); i++) {
      const prescription = samplePrescription(i, { prefix });
      rows.push({ external_id: prescription.external_id, prescription_identity: identityOf(prescription) });
    }
    await registerLocalPrescriptions(db, rows, { feed });
  }
}
