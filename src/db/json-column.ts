/**
 * A json/jsonb column's value as the driver hands it over: postgres.js parses it, PGlite (and an
 * array_to_json selected as text) may give the text. Either way, the value.
 */
export const jsonColumn = <T>(value: unknown): T => (typeof value === 'string' ? (JSON.parse(value) as T) : (value as T));
