import { DEFAULT_SCHEMA } from './schema/store-schema.js';

export { DEFAULT_SCHEMA };

/** Postgres truncates identifiers to 63 bytes (NAMEDATALEN - 1): a longer name would silently alias. */
const MAX_IDENTIFIER_BYTES = 63;
const LOWERCASE_IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/**
 * Why `name` cannot hold intake-sync's objects, or null when it can. Only plain lowercase
 * identifiers are taken (they need no quoting rules and cannot inject), and never a schema the
 * server or the vendor's applications own by default.
 */
export function schemaNameProblem(name: string): string | null {
  if (!LOWERCASE_IDENTIFIER.test(name)) return 'must be a lowercase identifier: a-z, 0-9 and _, not starting with a digit';
  if (Buffer.byteLength(name) > MAX_IDENTIFIER_BYTES) return `must be at most ${MAX_IDENTIFIER_BYTES} bytes`;
  if (name === 'public') return "must not be public: intake-sync keeps its objects apart from the vendor's";
  if (name.startsWith('pg_')) return "must not start with pg_ (reserved for the server's own schemas)";
  if (name === 'information_schema') return 'must not be information_schema';
  return null;
}
