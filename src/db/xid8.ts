import { customType } from 'drizzle-orm/pg-core';

/**
 * Postgres' 64-bit transaction id (pg_current_xact_id()). It never wraps around, so rows
 * can be tied to the transaction that wrote them for as long as they are kept.
 */
export const xid8 = customType<{ data: string; driverData: string }>({
  dataType() {
    return 'xid8';
  },
});
