import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import type { StoreNames } from '../../db/store-names.js';
import type { AnalyzeThreshold, TableActivity } from './decisions.js';

/**
 * The schema's tables with their rows changed since the last ANALYZE, and the server's analyze
 * threshold (read each pass: an ALTER SYSTEM and reload applies without a restart). Readable by any
 * role: pg_stat_all_tables, pg_class and these two settings are public.
 */
export async function readTableActivity(
  db: Pick<Db, 'execute'>,
  names: StoreNames,
): Promise<{ tables: TableActivity[]; threshold: AnalyzeThreshold }> {
  const rows = await queryRows<{ relname: string; n_mod: string | number; reltuples: number; base: string; scale: string }>(
    db,
    sql`select s.relname::text as relname, s.n_mod_since_analyze as n_mod, c.reltuples::float8 as reltuples,
          current_setting('autovacuum_analyze_threshold') as base, current_setting('autovacuum_analyze_scale_factor') as scale
        from pg_catalog.pg_stat_all_tables s join pg_catalog.pg_class c on c.oid = s.relid
        where s.schemaname = ${names.schema}::text and c.relkind in ('r', 'p')
        order by s.relname`,
  );
  const [first] = rows;
  return {
    tables: rows.map((r) => ({ table: r.relname, rowsChanged: Number(r.n_mod), reltuples: Number(r.reltuples) })),
    // the server's defaults (50, 0.1) when the schema has no table to read them with
    threshold: { base: first ? Number(first.base) : 50, scaleFactor: first ? Number(first.scale) : 0.1 },
  };
}

/** ANALYZE of one table of the schema, through the owner's _analyze_table (sql/api/statistics/_analyze_table.sql). */
export async function analyzeTable(db: Pick<Db, 'execute'>, names: StoreNames, table: string): Promise<void> {
  await db.execute(sql`select ${names.qualified('_analyze_table')}(${table}::text)`);
}
