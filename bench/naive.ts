import type postgres from 'postgres';
import { insertFillerPrescriptions } from './filler-prescriptions.js';

/** A hand-written poller's throughput: one transaction per event. */
export interface NaiveResult {
  events: number;
  seconds: number;
  events_per_s: number;
}

const FEED = 'naive';
const NAMES = ['accepted', 'ordered', 'dispensed', 'delivered'] as const;

/**
 * One transaction per event from Node, as a hand-written poller commits: update the matching prescription's
 * status forward-only, insert the event ON CONFLICT DO NOTHING, move the checkpoint, COMMIT. Events are
 * generated in memory (no HTTP, no validation), so this is the naive design's best case.
 */
export async function measureNaive(sql: postgres.Sql, prescriptions: number, seconds: number): Promise<NaiveResult> {
  await insertFillerPrescriptions(sql, FEED, 1, prescriptions);
  await sql`insert into feed_checkpoints (feed) values (${FEED})`;
  const keys = (await sql<Array<{ identity_key: string }>>`
    select identity_key from prescriptions where external_id like ${`${FEED}-%`} order by id`).map((r) => r.identity_key);
  let version = 0;
  let g = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  while (performance.now() < deadline) {
    const key = keys[g % keys.length] as string;
    const step = Math.floor(g / keys.length) % NAMES.length;
    const id = `naive_${g}`;
    const name = NAMES[step] as string;
    const occurredAt = new Date(Date.now() - 3_600_000 + (step + 1) * 300_000).toISOString();
    const raw = { id, name, identity_key: key, occurred_at: occurredAt, api_version: '2024-12-10', payload: {} };
    await sql.begin(async (tx) => {
      const [match] = await tx<Array<{ id: number }>>`
        update prescriptions set status = ${name}, status_rank = ${step + 1}, status_occurred_at = ${occurredAt},
               status_event_id = ${id}, updated_at = now()
         where identity_key = ${key} and status_rank < ${step + 1}
        returning id`;
      await tx`
        insert into events (id, feed, name, occurred_at, subscription_id, api_version, payload, raw, identity_key, prescription_id)
        values (${id}, ${FEED}, ${name}, ${occurredAt}, ${`sub_n_${g}`}, '2024-12-10', '{}'::jsonb, ${tx.json(raw)},
                ${key}, ${match?.id ?? null})
        on conflict (id) do nothing`;
      const moved = await tx`
        update feed_checkpoints set version = version + 1, iterator = ${id}, updated_at = now(),
               events_applied = events_applied + 1
         where feed = ${FEED} and version = ${version}`;
      if (moved.count !== 1) throw new Error(`naive checkpoint moved under version ${version}`);
    });
    version += 1;
    g += 1;
  }
  const elapsed = (performance.now() - started) / 1000;
  return { events: g, seconds: elapsed, events_per_s: g / elapsed };
}
