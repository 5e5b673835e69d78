import { sql } from 'drizzle-orm';
import { queryRows, type Database } from '../db/connection.js';
import type { RetentionSource, TableSizeSource } from './metrics-retention.js';

/** The feed's last completed retention pass (retention_runs), as unix seconds; 0 before the first. */
export function retentionSource(database: Database, feed: string): RetentionSource {
  const table = database.names.qualified('retention_runs');
  return async () => {
    const [row] = await queryRows<{ at: unknown }>(
      database.db,
      sql`select extract(epoch from last_run_at)::float8 as at from ${table} where feed = ${feed}::text`,
    );
    return row ? Number(row.at) : 0;
  };
}

/**
 * Each table's size: pg_total_relation_size (heap, indexes, TOAST), which stats the relation's files
 * (a few system calls per table, no table read), so it is exact at scrape time and cheap. pg_class.relpages
 * would be cheaper still but is only as fresh as the last VACUUM or ANALYZE.
 */
export function tableSizeSource(database: Database): TableSizeSource {
  const schema = database.names.schema;
  return async () => {
    const rows = await queryRows<{ name: string; bytes: unknown }>(
      database.db,
      sql`select c.relname as name, pg_total_relation_size(c.oid)::float8 as bytes
          from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where n.nspname = ${schema}::text and c.relkind in ('r', 'p')`,
    );
    return Object.fromEntries(rows.map((r) => [r.name, Number(r.bytes)]));
  };
}
