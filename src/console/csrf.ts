import { timingSafeEqual } from 'node:crypto';

/** The form field every console form carries its CSRF token in. */
export const CSRF_FIELD = '_csrf';

/** Whether a submitted token equals the expected one (constant time; a missing one never does). Pure. */
export function csrfTokenMatches(expected: string | undefined, submitted: unknown): boolean {
  if (typeof expected !== 'string' || expected === '' || typeof submitted !== 'string' || submitted === '') return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(submitted);
  return a.length === b.length && timingSafeEqual(a, b);
}
