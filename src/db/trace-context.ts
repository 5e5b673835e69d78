import { type SQL, sql } from 'drizzle-orm';
import type postgres from 'postgres';
import { activeTraceparent } from '../telemetry/spans.js';

/**
 * Sets intake_sync.traceparent for the transaction just begun on `client` from the active span (the
 * page's), so the rows it writes carry the trace (status_changes.trace_id reads it in its default,
 * src/db/schema/trace-context-defaults.ts). Nothing is sent when no span records: tracing off costs
 * no statement. Queued behind BEGIN like every statement of the transaction; the value is one this
 * process formatted (formatTraceparent), passed as a parameter.
 */
export function setTraceContext(client: postgres.Sql, prepare: boolean): Promise<unknown> | undefined {
  const traceparent = activeTraceparent();
  if (!traceparent) return undefined;
  return client
    .unsafe("select pg_catalog.set_config('intake_sync.traceparent', $1, true)", [traceparent], { prepare })
    .execute()
    .then(() => undefined);
}

/** The same setting as one drizzle statement, for a transaction run through drizzle; undefined when no span records. */
export function traceContextSql(): SQL | undefined {
  const traceparent = activeTraceparent();
  return traceparent ? sql`select pg_catalog.set_config('intake_sync.traceparent', ${traceparent}::text, true)` : undefined;
}
