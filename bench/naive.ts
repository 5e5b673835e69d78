import type postgres from 'postgres';
import { IntakeClient } from '../src/intake/client.js';
import { classifyEvent } from '../src/sync/apply/classify-event.js';
import type { SandboxProcess } from './sandbox-process.js';

/** A hand-written poller's throughput: one transaction per event. */
export interface NaiveResult {
  events: number;
  seconds: number;
  events_per_s: number;
}

const FEED = 'naive';

/**
 * The poller a vendor would write by hand, reading the same kind of seeded feed as the drain:
 * GET /events pages from the simulator, each event validated (the daemon's own zod contract), then
 * one transaction per event: find the local prescription (erx_message_id, else the composite
 * identity key; exactly one match applies), insert the event ON CONFLICT DO NOTHING, move the
 * prescription's status forward, record progress in the checkpoint row, COMMIT. Malformed and
 * unmatched events are stored without a prescription, as cheaply as possible for this design.
 * Runs for `seconds` or until the feed is done, whichever comes first.
 */
export async function measureNaive(sql: postgres.Sql, sandbox: SandboxProcess, seconds: number): Promise<NaiveResult> {
  await sql`insert into intake_sync.feed_checkpoints (feed) values (${FEED})`;
  const client = new IntakeClient({ baseUrl: sandbox.baseUrl, apiKey: sandbox.key, apiSecret: sandbox.secret });
  let version = 0;
  let events = 0;
  let iterator: string | undefined;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  pages: while (performance.now() < deadline) {
    const page = await client.listEvents({ ...(iterator ? { iterator } : {}), limit: 250 });
    for (const raw of page.events) {
      if (performance.now() >= deadline) break pages;
      const classified = classifyEvent(raw);
      if (!classified.ok) continue;
      const { event } = classified;
      await sql.begin(async (tx) => {
        const candidates = classified.erx
          ? await tx<Array<{ id: string }>>`select id from intake_sync.prescriptions where erx_message_id = ${classified.erx}`
          : await tx<Array<{ id: string }>>`select id from intake_sync.prescriptions where identity_key = ${classified.key}`;
        const prescriptionId = candidates.length === 1 ? (candidates[0]?.id ?? null) : null;
        const inserted = await tx`
          insert into intake_sync.events (id, feed, name, occurred_at, subscription_id, api_version, payload, raw, identity_key,
                              erx_message_id, status_rank, prescription_id)
          values (${event.id}, ${FEED}, ${event.name}, ${classified.occurredAt}, ${event.subscription_id}, ${event.api_version},
                  ${tx.json(event.payload as postgres.JSONValue)}, ${JSON.stringify(raw)}::json, ${classified.key}, ${classified.erx},
                  ${classified.rank}, ${prescriptionId})
          on conflict (feed, id) do nothing returning id`;
        if (inserted.length === 1 && prescriptionId !== null && classified.rank !== null) {
          await tx`
            update intake_sync.prescriptions set status = ${event.name}, status_rank = ${classified.rank}, status_occurred_at = ${classified.occurredAt},
                   status_event_id = ${event.id}, updated_at = now()
             where id = ${prescriptionId} and status_rank < ${classified.rank}`;
        }
        const moved = await tx`
          update intake_sync.feed_checkpoints set version = version + 1, iterator = ${iterator ?? null}, updated_at = now(),
                 events_applied = events_applied + 1
           where feed = ${FEED} and version = ${version}`;
        if (moved.count !== 1) throw new Error(`naive checkpoint moved under version ${version}`);
      });
      version += 1;
      events += 1;
    }
    if (page.meta.done) break;
    iterator = page.meta.iterator;
  }
  const elapsed = (performance.now() - started) / 1000;
  return { events, seconds: elapsed, events_per_s: events / elapsed };
}
