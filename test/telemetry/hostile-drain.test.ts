import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows, type Db } from '../../src/db/connection.js';
import { registerLocalPrescriptions } from '../../src/sync/matching/local-prescriptions.js';
import type { Telemetry } from '../../src/telemetry/start.js';
import { canaryPatient, type CanaryPatient } from '../support/faults/canary-fixtures.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import { startHostileFeedServer, type HostileFeedServer } from '../support/hostile-feed-server.js';
import { ALLOWED_ATTRIBUTE_KEYS } from '../../src/telemetry/attributes.js';
import type { OtlpReceiver } from '../support/telemetry/otlp-receiver.js';
import { capturedLogger, changes, drainFeed, needlesIn, tracingTo } from '../support/telemetry/traced-world.js';

// Issue 38 §4: a feed of hostile events carrying the canary patients' PHI everywhere an operator could
// put it (identity, payload, event id, name, subscription, bad shapes that quarantine) drained with every
// span exported over OTLP/JSON to a real receiver: no byte of any export holds the PHI, and no
// attribute key is off the allow-list. The canaries and the hostile server are the hardening suite's.

const onPostgres = await postgresReachable();

let tdb: TestDatabase;
let db: Db;
let server: HostileFeedServer;
let receiver: OtlpReceiver;
let telemetry: Telemetry;

type LocalIdentity = Parameters<typeof registerLocalPrescriptions>[1][number]['prescription_identity'];
const identityOf = (p: CanaryPatient) => p.identity as LocalIdentity;

/** A well-formed event about `patient`, its payload and id carrying the patient's PHI too. */
function goodEvent(id: string, patient: CanaryPatient, name = 'accepted'): string {
  const phi = patient.needles.map((n) => n.value);
  return JSON.stringify({
    id,
    name,
    prescription_identity: { ...identityOf(patient), erx_message_id: null },
    pharmacy_npi: '1689411712',
    occurred_at: '2024-12-10T10:00:00Z',
    api_version: '2024-12-10',
    subscription_id: `sub-${phi[0]}`,
    payload: { note: phi.join(' '), patient: patient.prescription.patient },
  });
}

/** Hostile shapes about `patient`: each quarantines (or is refused) with the PHI inside. */
function hostileEvents(n: number, patient: CanaryPatient): string[] {
  const good = goodEvent(`h-${n}`, patient);
  const first = String(identityOf(patient).patient_first_name);
  return [
    good.replace('"name":"accepted"', `"name":${JSON.stringify(`accepted ${first}`)}`),
    good.replace(`"id":"h-${n}"`, `"id":${JSON.stringify(`h-${n}-${first}`)}`).replace('"name":"accepted"', '"name":1e400'),
    good.replace('"api_version":"2024-12-10"', `"api_version":${JSON.stringify(first)}`),
    good.replace('"occurred_at":"2024-12-10T10:00:00Z"', `"occurred_at":${JSON.stringify(first)}`),
    good.replace('"pharmacy_npi":"1689411712"', `"pharmacy_npi":{"${first}":[${'['.repeat(50)}${']'.repeat(50)}]}`),
    `{"id":"h-${n}-raw","weird":${JSON.stringify(patient.prescription)}}`,
    JSON.stringify(patient.prescription),
  ].map((text, k) => text.replace(`"id":"h-${n}"`, `"id":"h-${n}-${k}"`));
}

beforeAll(async () => {
  if (!onPostgres) return;
  ({ receiver, telemetry } = await tracingTo('http/json'));
  tdb = await createTestDatabase('otel_hostile_drain');
  db = tdb.database.db;
  server = await startHostileFeedServer([]);
});
afterAll(async () => {
  if (!onPostgres) return;
  await telemetry.shutdown();
  await server.close();
  await tdb.drop();
  await receiver.close();
});

describe.skipIf(!onPostgres)(`a hostile feed drained with every span exported (${NEEDS_POSTGRES})`, () => {
  it('no exported byte and no log line holds the PHI it injected; every attribute key is allowed', async () => {
    const patients = [1, 2, 3, 4].map((i) => canaryPatient(i));
    // two of them are the vendor's: their events match and change a status (the page then looks up deliveries)
    await registerLocalPrescriptions(db, [
      { external_id: 'canary-local-1', prescription_identity: identityOf(patients[0] as CanaryPatient) },
      { external_id: 'canary-local-2', prescription_identity: identityOf(patients[1] as CanaryPatient) },
    ]);
    const texts = patients.flatMap((p, n) => [goodEvent(`g-${n}`, p), ...hostileEvents(n, p), goodEvent(`g-${n}`, p)]);
    server.setEvents(texts);
    const { log, lines } = capturedLogger();
    await drainFeed(db, server.baseUrl, { key: 'k', secret: 's' }, log, 7);
    await telemetry.flush();

    const spans = receiver.spans();
    const pages = spans.filter((s) => s.name === 'intake_sync.page apply');
    expect(pages.length).toBeGreaterThan(3);
    const total = (key: string) => pages.reduce((sum, s) => sum + Number(s.attributes[key] ?? 0), 0);
    expect(total('intake_sync.page.events')).toBe(texts.length);
    expect(total('intake_sync.page.quarantined')).toBeGreaterThan(0);
    expect(total('intake_sync.page.status_changes')).toBe(2);
    // what the daemon stored is what the spans counted: the quarantine holds the hostile ones
    const [held] = await queryRows<{ n: number }>(db, sql`select count(*)::int as n from intake_sync.quarantine`);
    expect(held?.n).toBeGreaterThan(0);
    expect((await changes(db)).every((c) => c.trace_id !== null)).toBe(true);

    const allowed = new Set<string>(ALLOWED_ATTRIBUTE_KEYS);
    const keys = spans.flatMap((s) => [
      ...Object.keys(s.attributes),
      ...s.events.flatMap((e) => Object.keys(e.attributes)),
      ...s.links.flatMap((l) => Object.keys(l.attributes)),
    ]);
    expect(keys.filter((k) => !allowed.has(k))).toEqual([]);

    const needles = patients.flatMap((p) => p.needles);
    expect(needles.length).toBeGreaterThan(20);
    expect(receiver.bodies().length).toBeGreaterThan(0);
    expect(needlesIn(receiver.bodies(), needles), 'PHI in an OTLP export').toEqual([]);
    expect(needlesIn(lines, needles), 'PHI in a log line').toEqual([]);
    expect(receiver.contentTypes().every((t) => t.startsWith('application/json'))).toBe(true);
  });
});
