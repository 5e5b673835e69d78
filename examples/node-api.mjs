import { readFile } from 'node:fs/promises';
import postgres from 'postgres';
import { followStatusChanges, intakeSyncApi } from 'intake-sync';

const url = process.env.DATABASE_URL;
const sql = postgres(url);
const intake = intakeSyncApi(sql); // pass { schema } when DATABASE_SCHEMA is not intake_sync

// A prescription received by fax: registered, its events match it (held ones at once).
await intake.registerPrescription('fax-1001', {
  patient_first_name: 'Ada',
  patient_last_name: 'Lovelace',
  patient_state: 'NY',
  patient_dob: '1990-12-10',
  prescriber_npi: '1234567893',
  written_date: '2026-11-20',
  drug_ndc: '00002015204',
});

// A prescription to send (examples/prescription.json): queued in the same transaction as your own
// writes, delivered by the daemon.
const prescription = JSON.parse(await readFile(new URL('prescription.json', import.meta.url), 'utf8'));
await sql.begin(async (tx) => {
  // await tx`insert into orders ${tx(order)}`;
  await intake.in(tx).sendPrescription(prescription);
});
console.log(
  'outbox',
  (await intake.outboxStatus(prescription.external_id)).map((row) => row.state),
);
console.log('status', (await intake.prescriptionStatus('fax-1001'))?.status);

// Every status change, in commit order, resuming from a cursor you stored (null: from the start).
// A service follows for as long as it runs; this example stops once 5 s pass without a change.
const stop = new AbortController();
let quiet = setTimeout(() => stop.abort(), 5_000);
for await (const change of followStatusChanges({ url, since: null, signal: stop.signal })) {
  console.log('change', change.external_id, change.previous_status, '->', change.new_status);
  // change.trace_id: the trace of the page that applied it (null when untraced): link your own span to it
  // store change.cursor with your own work, then wait for the next change
  clearTimeout(quiet);
  quiet = setTimeout(() => stop.abort(), 5_000);
}
await sql.end();
