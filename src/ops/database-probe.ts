import { sql } from 'drizzle-orm';
import type { Database } from '../db/connection.js';

/** A /readyz probe: true when the database answers `select 1` within `timeoutMs`. Never throws. */
export function databaseProbe(database: Database, timeoutMs = 2_000): () => Promise<boolean> {
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const query = database.db.execute(sql`select 1`).then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([query, timeout]);
    } finally {
      clearTimeout(timer);
    }
  };
}
