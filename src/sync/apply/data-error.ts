/**
 * The SQLSTATE of a database error: on the error or in its cause chain (drizzle wraps driver errors
 * as "Failed query"), undefined when none is found.
 */
export function sqlStateOf(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

/**
 * Whether Postgres refused a statement for the data it carried, so the same statement would fail
 * again however often it is retried: class 22 (data exception: 22P02 invalid text, 22P05
 * untranslatable character, 22021 bad encoding, 22003 out of range...), 23 (integrity: a CHECK or
 * NOT NULL a value breaks) and 54 (program limit: 54000 index row too big, 54001 stack depth).
 * Anything else (lost connection, lock or statement timeout, serialization, permissions) is not the
 * page's fault and is retried whole. Pure.
 */
export function isDataError(error: unknown): boolean {
  const state = sqlStateOf(error);
  return state !== undefined && /^(22|23|54)/.test(state);
}
