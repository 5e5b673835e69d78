import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import { namesOf, type StoreNames } from '../../db/store-names.js';
import { loadCheckpoint } from '../poll/checkpoint.js';
import { finishedStatesSql } from './migration-progress.js';
import type { LoadedCheckpoint } from '../poll/poller.js';
import { SOURCE_STATES, type RecordedSource, type SourceState } from './source-plan.js';

/** A feed_sources row in full, for status, health and metrics (URLs and versions only: no PHI). */
export interface FeedSourceRow extends RecordedSource {
  iterator: string | null;
  version: number;
  pagesApplied: number;
  eventsApplied: number;
  migrationCompletedAt: Date | null;
  drainingSince: Date | null;
  retiredAt: Date | null;
}

const date = (value: unknown): Date | null => (value === null || value === undefined ? null : new Date(value as string | Date));

function toState(value: unknown): SourceState {
  return (SOURCE_STATES as readonly unknown[]).includes(value) ? (value as SourceState) : 'retired';
}

const selectSources = (n: StoreNames, feed: string) =>
  sql`select base_url, api_version, state, iterator, version, pages_applied, events_applied, migration_completed_at, draining_since, retired_at
      from ${n.feedSources} where feed = ${feed}::text order by created_at, base_url`;

/**
 * The base URL of the feed's current source (recorded by `subscriptions migrate`), or null when the feed
 * never migrated: what every path that creates a subscription at the operator goes through.
 */
export async function currentSourceBaseUrl(db: Db, feed: string): Promise<string | null> {
  const [row] = await queryRows<{ base_url: string }>(
    db,
    sql`select base_url from ${namesOf(db).feedSources} where feed = ${feed}::text and state = 'current'`,
  );
  return row?.base_url ?? null;
}

/** The feed's recorded sources, oldest first (none for a feed that never migrated). */
export async function listFeedSources(db: Db, feed: string): Promise<FeedSourceRow[]> {
  const rows = await queryRows<Record<string, unknown>>(db, selectSources(namesOf(db), feed));
  return rows.map((r) => ({
    baseUrl: r.base_url as string,
    apiVersion: r.api_version as string,
    state: toState(r.state),
    iterator: (r.iterator as string | null) ?? null,
    version: Number(r.version),
    pagesApplied: Number(r.pages_applied),
    eventsApplied: Number(r.events_applied),
    migrationCompletedAt: date(r.migration_completed_at),
    drainingSince: date(r.draining_since),
    retiredAt: date(r.retired_at),
  }));
}

// the sources' fingerprint in SQL, the same text sourcesSignature() builds: read with every position
const signatureSql = (n: StoreNames, feed: string) =>
  sql`coalesce((select string_agg(s.base_url || '=' || s.state, ' ' order by s.base_url || '=' || s.state collate "C")
      from ${n.feedSources} s where s.feed = ${feed}::text), '')`;

/** A position as the poller loads it, with the sources' fingerprint read in the same statement. */
export interface SourcedCheckpoint extends LoadedCheckpoint {
  signature: string;
  /** draining source only: every old subscription is cancelled (the source may retire once read to the end) */
  migrationCompleted: boolean;
}

/**
 * The feed's checkpoint (the current source's position) and the sources' fingerprint in one statement:
 * a caught-up poller costs no more than before, and notices a migration within a checkpoint reload.
 */
export async function loadCurrentPosition(db: Db, feed: string): Promise<SourcedCheckpoint> {
  const n = namesOf(db);
  const read = () =>
    queryRows<{ iterator: string | null; version: unknown; updated_at: unknown; signature: string }>(
      db,
      sql`select iterator, version, updated_at, ${signatureSql(n, feed)} as signature from ${n.feedCheckpoints} where feed = ${feed}::text`,
    );
  let [row] = await read();
  if (!row) {
    await loadCheckpoint(db, feed);
    [row] = await read();
  }
  if (!row) throw new Error(`checkpoint of feed "${feed}" vanished right after it was ensured`);
  return {
    iterator: row.iterator,
    version: Number(row.version),
    updatedAt: new Date(row.updated_at as string | Date),
    signature: row.signature,
    migrationCompleted: false,
  };
}

/** A draining source's own position (its feed_sources row), with the fingerprint. Throws when the row is gone. */
export async function loadDrainingPosition(db: Db, feed: string, baseUrl: string): Promise<SourcedCheckpoint & { state: SourceState }> {
  const n = namesOf(db);
  const [row] = await queryRows<{
    iterator: string | null;
    version: unknown;
    updated_at: unknown;
    state: unknown;
    migration_completed_at: unknown;
    signature: string;
  }>(
    db,
    sql`select iterator, version, updated_at, state, migration_completed_at, ${signatureSql(n, feed)} as signature
        from ${n.feedSources} where feed = ${feed}::text and base_url = ${baseUrl}::text`,
  );
  if (!row) throw new Error(`feed ${feed}: source ${baseUrl} is no longer recorded`);
  return {
    iterator: row.iterator,
    version: Number(row.version),
    updatedAt: new Date(row.updated_at as string | Date),
    signature: row.signature,
    state: toState(row.state),
    migrationCompleted: row.migration_completed_at !== null && row.migration_completed_at !== undefined,
  };
}

/**
 * Retires a draining source: only when its migration is complete and its position is still the one
 * the caller read to the end (a compare-and-set on the version), and no outbox send went through it
 * without a finished progress row of the migration (a late joiner the migration has not moved: see
 * addLateJoiners). Such a send reopens the migration instead (migration_completed_at cleared, in the
 * same statement): `status` and the next `subscriptions migrate` say it is not complete, and the rerun
 * moves it. True when this call retired it.
 */
export async function retireSource(db: Db, feed: string, baseUrl: string, expectedVersion: number): Promise<boolean> {
  const n = namesOf(db);
  const progress = (finished: boolean) => sql`select 1 from ${n.subscriptionMigrations} m
      where m.feed = o.feed and m.external_id = o.external_id
        and m.target_version = (select c.api_version from ${n.feedSources} c where c.feed = o.feed and c.state = 'current')
        and ${finished ? sql`m.state = any (${finishedStatesSql()}::text[])` : sql`true`}`;
  // in flight, or a late joiner not finished (a delivered send with no row was local at the start: the set's business)
  const unmoved = sql`exists (select 1 from ${n.outbox} o
      where o.feed = ${feed}::text and o.kind = 'send' and o.sent_through = ${baseUrl}::text and o.state <> 'failed'
        and (o.state = 'pending' or exists (${progress(false)})) and not exists (${progress(true)}))`;
  const rows = await queryRows<{ state: string }>(
    db,
    sql`update ${n.feedSources} s set
          state = case when ${unmoved} then s.state else 'retired' end,
          retired_at = case when ${unmoved} then s.retired_at else now() end,
          migration_completed_at = case when ${unmoved} then null else s.migration_completed_at end,
          updated_at = now()
        where s.feed = ${feed}::text and s.base_url = ${baseUrl}::text and s.state = 'draining'
          and s.migration_completed_at is not null and s.version = ${expectedVersion}::bigint
        returning s.state`,
  );
  return rows[0]?.state === 'retired';
}
