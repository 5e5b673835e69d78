import { sql } from 'drizzle-orm';
import type { Db } from './connection.js';
import { namesOf } from './store-names.js';

/** What the owner's environment says, as the SQL API's SECURITY DEFINER functions trust it. */
export interface OwnerSettings {
  /** RETAIN_AUDIT in ms (null: forever): the floor of every audit purge, whatever its caller asks */
  retainAuditMs: number | null;
}

/** The rows of owner_settings for `settings` (pure): name and text value. */
export function ownerSettingRows(settings: OwnerSettings): { name: string; value: string }[] {
  const audit = settings.retainAuditMs;
  return [{ name: 'retain_audit_ms', value: audit === null ? 'forever' : String(Math.max(0, Math.floor(audit))) }];
}

/**
 * Writes the owner's settings (owner_settings, drizzle/0018_terminal_identities.sql). Called only where
 * the process migrated, so as the schema owner: no other role may write that table.
 */
export async function recordOwnerSettings(db: Db, settings: OwnerSettings): Promise<void> {
  const table = namesOf(db).qualified('owner_settings');
  for (const row of ownerSettingRows(settings)) {
    await db.execute(
      sql`insert into ${table} (name, value, updated_at) values (${row.name}, ${row.value}, now())
          on conflict (name) do update set value = excluded.value, updated_at = excluded.updated_at`,
    );
  }
}
