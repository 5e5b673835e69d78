import type postgres from 'postgres';
import { OPERATOR_PHARMACY_NPI } from '../src/intake/fields.js';
import { preparePage } from '../src/sync/apply/prepare-page.js';
import { identityKey } from '../src/sync/matching/identity-key.js';
import { insertFillerPrescriptions } from './filler-prescriptions.js';

/** The feed every page of `bench:page` is applied to (its prescriptions are registered in it). */
export const PAGE_FEED = 'page';
export const PAGE_EVENTS = 250;
const STEPS = ['accepted', 'ordered', 'dispensed', 'delivered'] as const;

/** The identity of the bench's prescription n: real-shaped fields, one patient per prescription. */
function identity(n: number) {
  return {
    patient_first_name: `Pat${n}`,
    patient_last_name: `Lastname${n % 9973}`,
    patient_state: 'CA',
    patient_dob: `19${String(40 + (n % 60)).padStart(2, '0')}-0${1 + (n % 9)}-1${n % 10}`,
    erx_message_id: null,
    prescriber_npi: '1234567893',
    written_date: '2025-01-15',
    drug_ndc: '00002015204',
  };
}

/**
 * Page p (1-based) of a drain of `prescriptions` prescriptions: event g = (p-1)*250 + i belongs to
 * prescription g mod N at step g div N (accepted, ordered, dispensed, delivered), as in a sandbox backlog, so
 * each page moves 250 distinct prescriptions one rank up. The events go through preparePage(): the json the
 * product sends, byte for byte.
 */
export function pageEventsJson(page: number, prescriptions: number): string {
  const events: unknown[] = [];
  for (let i = 0; i < PAGE_EVENTS; i++) {
    const g = (page - 1) * PAGE_EVENTS + i;
    const n = g % prescriptions;
    const step = Math.floor(g / prescriptions) % STEPS.length;
    events.push({
      id: `evt_${g}`,
      name: STEPS[step],
      occurred_at: new Date(Date.UTC(2026, 0, 1, 8, 0, 0) + step * 300_000 + n * 1000).toISOString(),
      pharmacy_npi: OPERATOR_PHARMACY_NPI,
      prescription_identity: identity(n),
      api_version: '2024-12-10',
      subscription_id: `sub_${n}`,
      payload: {},
    });
  }
  const prepared = preparePage(events);
  if (prepared.malformed.length > 0) throw new Error(`bench page ${page}: ${prepared.malformed[0]?.detail}`);
  return prepared.rowsJson.events;
}

/**
 * Seeds the template: `prescriptions` prescriptions the pages move (registered in PAGE_FEED with the
 * identity keys the events carry) with a delivered send each, `filler` more in the same feed that no page touches (index depth of
 * an install), the feed's checkpoint, and `pages` pages in bench_pages(n, events).
 */
export async function seedPageFixture(sql: postgres.Sql, prescriptions: number, filler: number, pages: number): Promise<void> {
  const rows = Array.from({ length: prescriptions }, (_, n) => ({ n, key: identityKey(identity(n)) }));
  await sql`
    insert into intake_sync.prescriptions (feed, external_id, patient_first_name, patient_last_name, patient_state, patient_dob,
      prescriber_npi, written_date, drug_ndc, identity_key)
    select ${PAGE_FEED}, 'rx-' || r.n, 'Pat' || r.n, 'x', 'CA', '1980-01-01', '1234567893', '2025-01-15', '00002015204', r.key
    from json_to_recordset(${JSON.stringify(rows)}::text::json) as r(n int, key text)`;
  // each moved prescription was sent: its delivered send awaits the answer its first status gives (overdue's `sent` stage)
  await sql`
    insert into intake_sync.outbox (feed, external_id, kind, state, completed_at, body_sha256)
    select feed, external_id, 'send', 'delivered', now() - interval '2 hours', 'bench' from intake_sync.prescriptions`;
  await insertFillerPrescriptions(sql, 'filler', 1, filler, PAGE_FEED);
  await sql`insert into intake_sync.feed_checkpoints (feed) values (${PAGE_FEED}) on conflict do nothing`;
  await sql`create table public.bench_pages (n int primary key, events json not null)`;
  for (let p = 1; p <= pages; p++) {
    await sql`insert into public.bench_pages values (${p}, ${pageEventsJson(p, prescriptions)}::text::json)`;
  }
}
