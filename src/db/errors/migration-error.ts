import { describeDatabaseError } from './describe-database-error.js';

/** A migration statement failed: names the migration, the schema and Postgres' own message and code. */
export class MigrationError extends Error {
  override readonly name = 'MigrationError';
  constructor(tag: string, schema: string, cause: unknown) {
    super(`migration ${tag} of schema "${schema}" failed: ${describeDatabaseError(cause)}`, { cause });
  }
}
