/**
 * What the logger removes from every object it writes, at any depth: values under keys that can
 * carry PHI or a secret, credentials inside connection strings, and the parameter list a driver
 * puts in a failed query's message. A safety net: call sites log identifiers only.
 *
 * Keys match whatever their spelling: `api_key`, `apiKey`, `API-KEY` are one key.
 */
const PHI_KEYS = [
  'patient',
  'patient_name',
  'patient_first_name',
  'patient_last_name',
  'patient_dob',
  'patient_state',
  'first_name',
  'middle_name',
  'last_name',
  'full_name',
  'given_name',
  'family_name',
  'names',
  'dob',
  'date_of_birth',
  'birth_date',
  'birthdate',
  'primary_phone',
  'phone',
  'phone_number',
  'mobile',
  'fax',
  'email',
  'address',
  'address_line1',
  'address_line2',
  'street',
  'ssn',
  'mrn',
  'diagnosis',
  'diagnoses',
  'allergies',
  'allergy',
  'medication',
  'medications',
  'note',
  'notes',
  'sig',
  'instructions',
  'prescription_identity',
  'identity',
  'payload',
  'raw',
  'body',
];
const SECRET_KEYS = [
  'authorization',
  'cookie',
  'token',
  'access_token',
  'refresh_token',
  'secret',
  'api_secret',
  'api_key',
  'password',
  'passwd',
  'passphrase',
  'sslpassword',
  'database_url',
  'lease_database_url',
  'owner_database_url',
  'connection_string',
  'dsn',
  // a failed query's bound values (postgres.js `parameters`, drizzle `params`)
  'params',
  'parameters',
];

export const CENSOR = '[REDACTED]';
/** Deeper than this, a value is replaced whole: a logged object is never walked without end. */
const MAX_DEPTH = 32;

const normalise = (key: string) => key.toLowerCase().replace(/[-_]/g, '');
const REDACTED_KEYS = new Set([...PHI_KEYS, ...SECRET_KEYS].map(normalise));

/** Whether a value under `key` is removed wherever it appears. */
export function isRedactedKey(key: string): boolean {
  return REDACTED_KEYS.has(normalise(key));
}

/** A string without the password of any URL in it, nor a failed query's parameter list. */
export function scrubString(value: string): string {
  return (
    value
      // scheme://user:password@host -> scheme://user:[REDACTED]@host
      .replace(/([a-z][a-z0-9+.-]*:\/\/[^\s/:@]*:)[^\s@/]*@/gi, `$1${CENSOR}@`)
      // key=value connection strings (libpq): password=... and sslpassword=...
      .replace(/\b(ssl)?password=[^\s&]*/gi, (_m, ssl: string | undefined) => `${ssl ?? ''}password=${CENSOR}`)
      // drizzle: "Failed query: <sql>\nparams: <values>"
      .replace(/\nparams: [\s\S]*$/, `\nparams: ${CENSOR}`)
  );
}

/**
 * A copy of `value` with every redacted key's value censored and every string scrubbed, at any
 * depth (cycles and depth bounded). Errors keep their name, message (scrubbed), code and stack.
 */
export function redactDeep(value: unknown, depth = 0, seen: WeakSet<object> = new WeakSet()): unknown {
  if (typeof value === 'string') return scrubString(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return CENSOR;
  if (seen.has(value)) return '[Circular]';
  seen.add(value);
  if (Array.isArray(value)) return value.map((item) => redactDeep(item, depth + 1, seen));
  const out: Record<string, unknown> = {};
  if (value instanceof Error) {
    out.type = value.name;
    out.message = scrubString(value.message);
    if (value.stack) out.stack = scrubString(value.stack);
  }
  for (const [key, inner] of Object.entries(value)) {
    out[key] = isRedactedKey(key) ? CENSOR : redactDeep(inner, depth + 1, seen);
  }
  return out;
}
