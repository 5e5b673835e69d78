import { FREE_TEXT_KEYS, MAX_API_BODY_BYTES, MAX_FREE_TEXT_LENGTH, MAX_IDENTITY_FIELD_LENGTH } from './limits.js';

/** A value of an SQL API call over its cap: the field's path (never the value) and the cap broken. */
export interface ApiInputProblem {
  field: string;
  message: string;
}

const FREE_TEXT = new Set<string>(FREE_TEXT_KEYS);

/** The cap of one string by its key (the last name of its path; array elements keep their array's). Pure. */
export function stringCap(key: string): number {
  return FREE_TEXT.has(key) ? MAX_FREE_TEXT_LENGTH : MAX_IDENTITY_FIELD_LENGTH;
}

/**
 * The first cap a JSON body given to the SQL API breaks, in the order _api_input_problem (sql) finds it:
 * the body's size first (UTF-8 bytes of its JSON text; Postgres measures jsonb's text form, which
 * puts a space after each `:` and `,`, so both sides measure that form), then each string by path
 * order. Lengths are code points, as Postgres' length(). Pure; the SQL twin is checked by
 * test/sql-api/outbox/input-caps.test.ts.
 */
export function apiInputProblem(body: unknown, root: string, jsonbText: string): ApiInputProblem | null {
  const bytes = Buffer.byteLength(jsonbText, 'utf8');
  if (bytes > MAX_API_BODY_BYTES) return { field: root, message: `must be at most ${MAX_API_BODY_BYTES} bytes of JSON (got ${bytes})` };
  const found: Array<{ path: string; cap: number; length: number }> = [];
  const walk = (value: unknown, path: string, key: string): void => {
    if (typeof value === 'string') {
      const length = [...value].length;
      const cap = stringCap(key);
      if (length > cap) found.push({ path, cap, length });
    } else if (Array.isArray(value)) value.forEach((item, i) => walk(item, `${path}[${i}]`, key));
    else if (value !== null && typeof value === 'object')
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) walk(v, `${path}.${k}`, k);
  };
  walk(body, root, root);
  found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const first = found[0];
  return first ? { field: first.path, message: `must be at most ${first.cap} characters (got ${first.length})` } : null;
}
