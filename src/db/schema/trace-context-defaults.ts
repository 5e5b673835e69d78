// The column defaults that read the transaction's trace context (0033, docs/operations.md "Tracing"):
// intake_sync.traceparent, a transaction-local setting that the page transaction sets from its span and
// that an app sets for its own transaction (`set local intake_sync.traceparent = '00-…'`). Read strictly
// as W3C Trace Context version 00 (55 characters, lower-case hex, neither id all zeros); anything else is
// ignored, as the recommendation says, and the column is null: a bad trace context never fails a write.

const SETTING = "pg_catalog.current_setting('intake_sync.traceparent', true)";

/** The setting when it is a valid traceparent, else null. */
export const TRACEPARENT_OF_SETTING =
  `CASE WHEN ${SETTING} ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'` +
  ` AND pg_catalog.substr(${SETTING}, 4, 32) <> '00000000000000000000000000000000'` +
  ` AND pg_catalog.substr(${SETTING}, 37, 16) <> '0000000000000000' THEN ${SETTING} END`;

/** The trace id (32 hex digits) of the setting when it is a valid traceparent, else null. */
export const TRACE_ID_OF_SETTING = `pg_catalog.substr(${TRACEPARENT_OF_SETTING}, 4, 32)`;
