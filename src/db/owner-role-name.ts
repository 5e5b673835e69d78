/**
 * The role `migrate --reassign-to` hands the schema to, checked before anything connects: 1-63
 * characters (PostgreSQL's NAMEDATALEN), a letter or underscore first, then letters, digits and
 * `_ $ . -`, and not a `pg_` name (reserved for the server's own roles). It is quoted as an
 * identifier in the ALTER statements; the bound keeps a typo or an injected string out of them.
 * Returns the name, or throws a RangeError naming `--reassign-to`.
 */
export function parseOwnerRoleName(value: string | undefined): string {
  if (value === undefined || value === '') throw new RangeError('--reassign-to: a role name is required');
  if (value.length > 63) throw new RangeError(`--reassign-to: a role name is at most 63 characters (got ${value.length})`);
  if (!/^[A-Za-z_][A-Za-z0-9_$.-]*$/.test(value)) {
    throw new RangeError('--reassign-to: a role name is a letter or _ first, then letters, digits, _ $ . - (as CREATE ROLE made it)');
  }
  if (/^pg_/i.test(value)) throw new RangeError("--reassign-to: pg_ roles are the server's own, never an owner of intake-sync");
  return value;
}

/** `name` as a quoted SQL identifier. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
