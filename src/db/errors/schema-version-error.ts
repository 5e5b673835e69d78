/**
 * The database's schema does not fit this version of the code: migrated by a newer version
 * (a rolled-back deploy must not write into a schema it does not know), or behind it while
 * migrations are not run on start.
 */
export class SchemaVersionError extends Error {
  override readonly name = 'SchemaVersionError';
}
