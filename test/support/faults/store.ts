import postgres from 'postgres';

/** application_name of the harness's own connections, so fault injection can spare them. */
export const HARNESS_APP_NAME = 'faults-harness';

/** A small side connection to a worker's database, marked as the harness's own. */
export function openSideConnection(url: string): postgres.Sql {
  return postgres(url, {
    max: 2,
    onnotice: () => {},
    connect_timeout: 5,
    connection: { application_name: HARNESS_APP_NAME },
  });
}

export interface PrescriptionState {
  status: string | null;
  statusOccurredAt: string | null;
  statusEventId: string | null;
}

export interface EventState {
  name: string;
  /** external_id of the prescription the event applied to, null when none */
  externalId: string | null;
}

export interface QuarantineState {
  reason: string;
  eventId: string | null;
}

/** The final state a drain is judged on, keyed for exact comparison. */
export interface StoreSnapshot {
  prescriptions: Record<string, PrescriptionState>;
  events: Record<string, EventState>;
  quarantine: Record<string, QuarantineState>;
}

const iso = (value: Date | string | null): string | null => (value === null ? null : new Date(value).toISOString());

/** Reads statuses by external_id, event ids with their links, and open quarantine entries. */
export async function snapshotStore(sql: postgres.Sql): Promise<StoreSnapshot> {
  const prescriptionRows = await sql<
    { external_id: string; status: string | null; status_occurred_at: Date | null; status_event_id: string | null }[]
  >`select external_id, status, status_occurred_at, status_event_id from intake_sync.prescriptions`;
  const eventRows = await sql<{ id: string; name: string; external_id: string | null }[]>`
    select e.id, e.name, p.external_id from intake_sync.events e left join intake_sync.prescriptions p on p.id = e.prescription_id`;
  const quarantineRows = await sql<{ quarantine_key: string; reason: string; event_id: string | null }[]>`
    select quarantine_key, reason, event_id from intake_sync.quarantine where resolved_at is null`;
  return {
    prescriptions: Object.fromEntries(
      prescriptionRows.map((r) => [
        r.external_id,
        { status: r.status, statusOccurredAt: iso(r.status_occurred_at), statusEventId: r.status_event_id },
      ]),
    ),
    events: Object.fromEntries(eventRows.map((r) => [r.id, { name: r.name, externalId: r.external_id }])),
    quarantine: Object.fromEntries(quarantineRows.map((r) => [r.quarantine_key, { reason: r.reason, eventId: r.event_id }])),
  };
}

export const STORE_TABLES = [
  'prescriptions',
  'events',
  'feed_checkpoints',
  'checkpoint_resets',
  'quarantine',
  'status_changes',
  'outbox',
] as const;

/** Row count of every store table: "nothing written" means these do not change. */
export async function rowCounts(sql: postgres.Sql): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of STORE_TABLES) {
    const [row] = await sql<{ n: number }[]>`select count(*)::int as n from intake_sync.${sql(table)}`;
    counts[table] = row?.n ?? 0;
  }
  return counts;
}

export interface CheckpointRow {
  iterator: string | null;
  version: number;
}

/** The feed's checkpoint row, or undefined before the first commit. */
export async function readCheckpoint(sql: postgres.Sql, feed: string): Promise<CheckpointRow | undefined> {
  const [row] = await sql<{ iterator: string | null; version: string | number }[]>`
    select iterator, version from intake_sync.feed_checkpoints where feed = ${feed}`;
  return row ? { iterator: row.iterator, version: Number(row.version) } : undefined;
}
