import { terminalSafe } from '../lib/terminal-text.js';

/** Variables whose value is never echoed: credentials, or URLs that may carry a password. */
const SECRET_VARIABLES = new Set([
  'INTAKE_API_KEY',
  'INTAKE_API_SECRET',
  'DATABASE_URL',
  'LEASE_DATABASE_URL',
  'CONSOLE_LOGIN_PASSWORD',
  // an OTLP backend's API key travels in the headers
  'OTEL_EXPORTER_OTLP_HEADERS',
]);

/** Longest value echoed back; a longer one is cut (a pasted file is not a setting). */
const MAX_SHOWN = 80;

/**
 * What a config error line adds after the expectation: the value given, quoted (cut at 80
 * characters), or a note that it is not shown for a secret. Empty when the variable was not given
 * (its message already says it is required). Pure.
 */
export function givenValueNote(variable: string, given: string | undefined): string {
  if (given === undefined) return '';
  if (SECRET_VARIABLES.has(variable)) return ' (the value given is not shown: it may hold a secret)';
  const masked = withoutUserinfo(given);
  const shown = masked.length > MAX_SHOWN ? `${masked.slice(0, MAX_SHOWN)}…` : masked;
  return ` (given "${terminalSafe(shown).replace(/"/g, '\\"')}")`;
}

// any URL-looking value (a base URL, a FEEDS_FILE path is not one) may carry user:password@: never echo it
function withoutUserinfo(value: string): string {
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#@]*@/i, '$1***@');
}
