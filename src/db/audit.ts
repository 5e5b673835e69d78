import { hostname, userInfo } from 'node:os';
import { sql } from 'drizzle-orm';
import type { StoreNames } from './store-names.js';

/** Executes one statement: a drizzle handle or a transaction handle. */
interface Executor {
  execute(query: ReturnType<typeof sql>): Promise<unknown>;
}

/** One row of the audit trail: identifiers, counts and reasons only, never PHI. */
export interface AuditEntry {
  /** what was done, `noun.verb` style: `checkpoint.reset`, `prescription.register`, `purge.run` */
  action: string;
  feed: string | null;
  /** the external_id, event id or iterator acted on */
  subject?: string | null;
  detail?: Record<string, unknown>;
}

/**
 * Who runs this process, beyond its database role: `user@host` of the operating system. The
 * database records session_user itself; this says which person or machine used that role.
 */
export function osActor(): string {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no passwd entry for the uid (a container's arbitrary uid)
    user = `uid-${process.getuid?.() ?? 'unknown'}`;
  }
  return `${user}@${hostname()}`;
}

/**
 * Records `entry` in the audit trail through `_audit()` (0010_audit_log.sql), on `tx`: call it in the
 * transaction of the action, so the row commits or rolls back with it. Take `names` from the root
 * handle before opening the transaction (namesOf).
 */
export async function recordAudit(
  tx: Executor,
  names: StoreNames,
  entry: AuditEntry,
  onBehalfOf: string | null = osActor(),
): Promise<void> {
  const detail = JSON.stringify(entry.detail ?? {});
  await tx.execute(
    sql`select ${names.qualified('_audit')}(${entry.action}, ${entry.feed}, ${entry.subject ?? null}, ${detail}::jsonb, ${onBehalfOf})`,
  );
}
