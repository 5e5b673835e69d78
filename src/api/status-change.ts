/** One row of `status_changes_since()`: a prescription's status changed, in a committed transaction. */
export interface StatusChange {
  /** opaque; pass it as `since` (or to status_changes_since) to resume after this change */
  cursor: string;
  external_id: string;
  /** null when the prescription had no status yet */
  previous_status: string | null;
  new_status: string;
  /** the operator event that set the new status */
  event_id: string | null;
  /** when the operator says the event happened (ISO 8601) */
  occurred_at: string | null;
  /** when the changing transaction started (ISO 8601) */
  changed_at: string;
  /** the prescription's feed (operator account) */
  feed: string;
  /** the W3C trace id of the transaction that made the change (the page's span), null when untraced */
  trace_id: string | null;
}

const iso = (value: unknown): string | null =>
  value === null || value === undefined ? null : value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString();

/** A status_changes_since() row as the driver returns it (timestamps as Date or text). */
export function toStatusChange(row: Record<string, unknown>): StatusChange {
  return {
    cursor: String(row.cursor),
    external_id: String(row.external_id),
    previous_status: (row.previous_status as string | null) ?? null,
    new_status: String(row.new_status),
    event_id: (row.event_id as string | null) ?? null,
    occurred_at: iso(row.occurred_at),
    changed_at: iso(row.changed_at) ?? '',
    feed: String(row.feed),
    trace_id: typeof row.trace_id === 'string' ? row.trace_id : null,
  };
}
