import type postgres from 'postgres';
import { sampleIdentity } from '../../src/sandbox/fixtures.js';
import { identityKey } from '../../src/sync/matching/identity-key.js';
import type { LocalPrescriptionInput } from '../../src/sync/matching/local-prescriptions.js';

/** Held events per identity: a prescription's accepted, ordered, dispensed, delivered. */
export const EVENTS_PER_IDENTITY = 4;
const NAMES = ['accepted', 'ordered', 'dispensed', 'delivered'] as const;

// fixture indexes far above the drain's (its prescriptions are fixtures 0..n): no identity is shared
const HELD_FROM = 50_000_000;
const UNMATCHED_FROM = 60_000_000;

/**
 * The identity of held fixture i: what an import line must carry to match its events. Seeded mode
 * inserts them from HELD_FROM on; the realistic mode's held events are the simulator's fixtures 0..n
 * (`from` 0), drained before anyone registered them.
 */
export const heldIdentity = (i: number, from = HELD_FROM) => sampleIdentity(from + i);

/**
 * Inserts `count` held events (a drain that ran before their prescriptions were registered: each
 * stored without a prescription and quarantined unmatched), EVENTS_PER_IDENTITY per identity, straight
 * into events and quarantine: set-based, so the setup takes seconds, not a drain.
 */
export async function insertHeldEvents(sql: postgres.Sql, feed: string, count: number): Promise<void> {
  const identities = Math.ceil(count / EVENTS_PER_IDENTITY);
  const CHUNK = 2_500;
  for (let start = 0; start < identities; start += CHUNK) {
    const rows = [];
    for (let i = start; i < Math.min(identities, start + CHUNK); i++) {
      const identity = heldIdentity(i);
      for (let k = 0; k < EVENTS_PER_IDENTITY && i * EVENTS_PER_IDENTITY + k < count; k++) {
        const id = `held-${i}-${k}`;
        const occurredAt = new Date(Date.UTC(2024, 11, 10, 10, k)).toISOString();
        const raw = {
          id,
          name: NAMES[k],
          prescription_identity: identity,
          pharmacy_npi: '1689411712',
          occurred_at: occurredAt,
          api_version: '2024-12-10',
          subscription_id: `held-sub-${i}`,
          payload: {},
        };
        rows.push({
          id,
          name: NAMES[k],
          occurred_at: occurredAt,
          subscription_id: raw.subscription_id,
          key: identityKey(identity),
          rank: k + 1,
          raw,
        });
      }
    }
    await sql`
      with r as (select * from jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb)
        as r(id text, name text, occurred_at timestamptz, subscription_id text, key text, rank int, raw jsonb)),
      e as (
        insert into intake_sync.events (id, feed, name, occurred_at, subscription_id, api_version, payload, raw, identity_key, status_rank)
        select id, ${feed}, name, occurred_at, subscription_id, '2024-12-10', '{}'::jsonb, raw::json, key, rank from r
      )
      insert into intake_sync.quarantine (quarantine_key, event_id, feed, reason, detail, raw)
      select id, id, ${feed}, 'unmatched', 'no local prescription matches its identity', raw from r`;
  }
  await sql`analyze intake_sync.events`;
  await sql`analyze intake_sync.quarantine`;
}

/**
 * The import file's lines: `matching` prescriptions carrying held identities 0..matching-1 (counted from
 * `heldFrom`, see heldIdentity), the rest
 * identities no held event has (prefix 'imp').
 */
export function importLines(total: number, matching: number, heldFrom = HELD_FROM): LocalPrescriptionInput[] {
  const lines: LocalPrescriptionInput[] = [];
  for (let i = 0; i < total; i++) {
    lines.push(
      i < matching
        ? { external_id: `held-rx-${i}`, prescription_identity: heldIdentity(i, heldFrom) }
        : { external_id: `imp-rx-${i}`, prescription_identity: sampleIdentity(UNMATCHED_FROM + i) },
    );
  }
  return lines;
}
