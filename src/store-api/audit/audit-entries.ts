import { sql } from 'drizzle-orm';
import { attributionOf, osActor } from '../../db/audit.js';
import { queryRows, type Db } from '../../db/connection.js';
import { jsonColumn } from '../../db/json-column.js';
import type { StoreNames } from '../../db/store-names.js';

// The audit trail's calls: an entry written in the transaction of the action it records (`_audit`),
// the actor named for the entries the SQL functions write themselves, and `audit list`'s read of
// audit_log. Who ran this is db/audit.ts.

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
 * Records `entry` in the audit trail through `_audit()` (sql/current-schema.sql), on `tx`: call it in the
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
  // `_audit` refuses an attribution outside its character set (22023); what a command composes
  // ("resync by ana@ops") is made to fit it here rather than fail the action it records
  const attribution = onBehalfOf === null ? null : attributionOf(onBehalfOf);
  await tx.execute(
    sql`select ${names.qualified('_audit')}(${entry.action}, ${entry.feed}, ${entry.subject ?? null}, ${detail}::jsonb, ${attribution})`,
  );
}

/**
 * Names the person or machine behind this transaction's role for every audit row written in it,
 * including those the SQL functions it calls write themselves (`_audit` reads `intake_sync.actor`
 * when no attribution is passed). Transaction-local: gone at commit.
 */
export async function setAuditActor(tx: Executor, onBehalfOf: string = osActor()): Promise<void> {
  await tx.execute(sql`select set_config('intake_sync.actor', ${attributionOf(onBehalfOf)}, true)`);
}

/** What `audit list` selects; every field is validated by the caller. */
export interface AuditFilter {
  /** entries at or after this instant */
  since?: Date | undefined;
  /** an action (`outbox.send`), or every action of a noun (`outbox.*`) */
  action?: string | undefined;
  feed?: string | undefined;
  /** at most this many, the newest */
  limit: number;
}

/** One entry of the view audit_log, as `audit list` prints it. */
export interface AuditLogRow {
  id: number;
  at: string;
  actor: string;
  client_addr: string | null;
  action: string;
  feed: string | null;
  subject: string | null;
  detail: Record<string, unknown>;
}

/** The newest entries of the audit trail matching `filter`, newest first (the view audit_log). */
export async function listAudit(db: Pick<Db, 'execute'>, names: StoreNames, filter: AuditFilter): Promise<AuditLogRow[]> {
  const action = filter.action ?? null;
  const prefix = action?.endsWith('.*') ? action.slice(0, -1) : null;
  const rows = await queryRows<Record<string, unknown>>(
    db,
    sql`select id, at, actor, client_addr::text as client_addr, action, feed, subject, detail
        from ${names.qualified('audit_log')}
        where (${filter.since?.toISOString() ?? null}::timestamptz is null or at >= ${filter.since?.toISOString() ?? null}::timestamptz)
          and (${prefix === null ? action : null}::text is null or action = ${prefix === null ? action : null}::text)
          and (${prefix}::text is null or left(action, length(${prefix}::text)) = ${prefix}::text)
          and (${filter.feed ?? null}::text is null or feed = ${filter.feed ?? null}::text)
        order by at desc, id desc
        limit ${filter.limit}`,
  );
  return rows.map((r) => ({
    id: Number(r.id),
    at: new Date(r.at as string | Date).toISOString(),
    actor: r.actor as string,
    client_addr: (r.client_addr as string | null) ?? null,
    action: r.action as string,
    feed: (r.feed as string | null) ?? null,
    subject: (r.subject as string | null) ?? null,
    detail: jsonColumn<Record<string, unknown>>(r.detail),
  }));
}
