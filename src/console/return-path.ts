/** The longest path kept to return to after sign-in (longer ones return to the Feeds page). */
const MAX_RETURN_PATH = 512;

/**
 * Where the user returns after signing in again: the page a GET was for (with its query), or for a
 * POST action the page its form was on (a finding's page for its Reveal, Resolve or Dismiss; the
 * dry run for Dismiss all matching). The action itself is never replayed. Undefined: the Feeds page. Pure.
 */
export function returnPathFor(method: string, path: string, query: string): string | undefined {
  if (method === 'POST') {
    const finding = /^(\/quarantine\/[^/]+\/[^/]+)\/(reveal|resolve|dismiss)$/.exec(path);
    if (finding) return safeReturnPath(finding[1] ?? '');
    // its filter travels in the form's fields, not the URL: back to the list
    if (path === '/quarantine/dismiss-all') return '/quarantine';
    return undefined;
  }
  if (path === '/' || path === '/sign-in' || path === '/sign-out') return undefined;
  return safeReturnPath(`${path}${query}`);
}

/**
 * A return path the sign-in form may redirect to, or undefined: only a path of this console (one
 * leading slash, no scheme, no backslash, no control character), bounded. Pure.
 */
export function safeReturnPath(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_RETURN_PATH) return undefined;
  if (!value.startsWith('/') || value.startsWith('//') || value.includes('\\')) return undefined;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f]/.test(value)) return undefined;
  if (value === '/sign-in' || value.startsWith('/sign-in?') || value === '/sign-out') return undefined;
  return value;
}
