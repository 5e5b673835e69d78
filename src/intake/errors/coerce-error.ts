/** Any thrown value as an Error (a non-Error is wrapped and kept in `cause`). */
export function coerceError(value: unknown): Error {
  if (value instanceof Error) return value;
  const text = typeof value === 'string' ? value : describeNonError(value);
  return new Error(`non-error thrown: ${text}`, { cause: value });
}

function describeNonError(value: unknown): string {
  if (value === null || value === undefined || typeof value !== 'object') return String(value);
  // an object's own content could hold anything (even PHI): name its kind only
  return `object ${Object.prototype.toString.call(value)}`;
}
