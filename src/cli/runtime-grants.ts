import type { Database } from '../db/connection.js';
import { missingGrants } from '../db/grants.js';

/** Thrown at start when the connected role lacks grants the daemon needs. */
export class MissingGrantsError extends Error {
  override readonly name = 'MissingGrantsError';
}

/**
 * Refuses to start a daemon whose role lacks a grant it needs, naming each one, instead of
 * failing later on the first page or delivery that happens to need it.
 */
export async function requireRuntimeGrants(database: Database): Promise<void> {
  if (database.kind !== 'postgres') return;
  const missing = await missingGrants(database, 'runtime');
  if (missing.length === 0) return;
  const schema = database.names.schema;
  throw new MissingGrantsError(
    `the database role lacks ${missing.length} grant(s) the daemon needs: ${missing.join('; ')}. ` +
      `As the owner, run: intake-sync grants --role runtime --to <this role> (DATABASE_SCHEMA=${schema}) | psql`,
  );
}
