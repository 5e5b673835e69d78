/** Longest schema prefix that keeps `<schema>_status` within Postgres' 63-byte identifier limit. */
const MAX_SCHEMA_PREFIX = 56;

/**
 * The NOTIFY channel of a deployment's change feed: its schema name followed by `_status`
 * (`intake_sync_status` by default). A schema longer than 56 bytes is cut, as the commit trigger
 * does (stamp_change_commit in sql/current-schema.sql): pg_notify() rejects a channel over 63 bytes. Two schemas sharing
 * those 56 bytes share a channel, which costs only spurious wake-ups: a notification is a hint.
 */
export function statusChannel(schema: string): string {
  return `${schema.slice(0, MAX_SCHEMA_PREFIX)}_status`;
}
