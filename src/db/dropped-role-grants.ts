import { sql } from 'drizzle-orm';
import { queryRows, type Database } from './connection.js';

/**
 * A feed_access record whose role is gone (`nowNamed` null: dropped) or whose OID now names another
 * role (renamed, or a dropped role's OID taken again: that role sees no feed until granted again).
 */
export interface DroppedRoleGrant {
  roleOid: number;
  roleName: string;
  nowNamed: string | null;
  feeds: string[];
}

/**
 * Those records (sql/api/feeds/_forget_dropped_roles.sql); with `clean`, a dropped role's are deleted
 * and audited (`role.forget`) in the caller's statement. `migrate` cleans as the owner, `doctor` lists.
 * Embedded PGlite has one user and no feed records: nothing to find.
 */
export async function droppedRoleGrants(database: Database, clean: boolean): Promise<DroppedRoleGrant[]> {
  if (database.kind !== 'postgres') return [];
  // the array as JSON: the connection fetches no array types
  const rows = await queryRows<{ role_oid: unknown; role_name: string; now_named: string | null; feeds: string[] }>(
    database.db,
    sql`select role_oid, role_name, now_named, to_jsonb(feeds) as feeds from ${database.names.qualified('_forget_dropped_roles')}(${clean}::boolean)`,
  );
  return rows.map((r) => ({ roleOid: Number(r.role_oid), roleName: r.role_name, nowNamed: r.now_named ?? null, feeds: r.feeds }));
}

/** How a list of them reads in one line: `clinic_old (dropped, oid 16512: clinic-a, clinic-b)`. Pure. */
export function describeDroppedRoleGrants(found: readonly DroppedRoleGrant[]): string {
  return found
    .map(
      (g) => `${g.roleName} (${g.nowNamed === null ? 'dropped' : `oid now named ${g.nowNamed}`}, oid ${g.roleOid}: ${g.feeds.join(', ')})`,
    )
    .join('; ');
}
