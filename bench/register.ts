import type { Db } from '../src/db/connection.js';
import { identityOf, samplePrescription } from '../src/sandbox/fixtures.js';
import { REGISTER_BATCH_SIZE, registerLocalPrescriptions } from '../src/sync/local-prescriptions.js';

/**
 * Registers, through the production path, the local prescriptions matching sandbox fixtures
 * `prefix`-from..to-1 (seeded prescription i is samplePrescription(i, { prefix })), a batch at a time.
 */
export async function registerFixturePrescriptions(db: Db, prefix: string, from: number, to: number): Promise<void> {
  for (let start = from; start < to; start += REGISTER_BATCH_SIZE) {
    const rows = [];
    for (let i = start; i < Math.min(to, start + REGISTER_BATCH_SIZE); i++) {
      const prescription = samplePrescription(i, { prefix });
      rows.push({ external_id: prescription.external_id, prescription_identity: identityOf(prescription) });
    }
    await registerLocalPrescriptions(db, rows);
  }
}
