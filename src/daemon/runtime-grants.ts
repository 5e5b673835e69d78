import type { Database } from '../db/connection.js';
import { missingGrants } from '../db/grants.js';
import { roleLikeness } from '../db/role-likeness.js';
import { missingRuntimeGrantsAdvice } from './role-advice.js';

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
  const { role, likeness } = await roleLikeness(database);
  throw new MissingGrantsError(missingRuntimeGrantsAdvice({ role, likeness, missing, schema: database.names.schema }));
}
