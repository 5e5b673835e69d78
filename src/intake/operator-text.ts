import type { z } from 'zod';
import { prescriptionRequestSchema } from './prescription.js';
import { createSubscriptionBodySchema } from './subscription.js';

// The operator's free text (the `error` of a 400/401/404, the messages of a 422) may quote what it
// refused: a patient's name, date of birth, phone. Nothing of it is logged, stored or shown as sent:
// only words of a fixed validation vocabulary survive, everything else becomes `…`. What is left says
// what kind of problem it was ("must be a valid date", "has already been taken"), never whose.

/** At most this many characters of one sanitised message. */
const MAX_TEXT_CHARS = 160;
/** At most this many fields of a 422, and messages per field. */
const MAX_FIELDS = 20;
const MAX_MESSAGES = 3;

// lowercase words validation messages are made of; no month, no common first name ("will", "may")
const VOCABULARY = new Set(
  `a an the is are be been being was were has have had already taken must should not no none any all only one each
  of to in on at by for from with without and or but as than then this that it its there
  value values field fields key keys parameter parameters argument request body json object array list element item items entry
  required missing blank empty present absent null nil invalid valid unknown unsupported unrecognized unexpected unpermitted
  format formatted type length too characters character chars digits digit number numbers numeric string text
  integer decimal boolean true false date time datetime timestamp future past before after earlier later
  allowed permitted accepted expected supported recognized match matches matching does do doesn't don't can't cannot
  exist exists existing found not_found duplicate duplicated unique same different greater less equal between
  most least more fewer exactly maximum minimum max min limit limits exceeded exceeds size large small
  included inclusion reserved contain contains containing letters lowercase uppercase whitespace spaces space
  please provide provided use used send sent try again later
  iterator cursor position expired expire expires expiry retention retained longer available old purged trimmed
  feed event events page pages point points id ids identifier external erx message status version api versions
  code state zip zipcode postal phone email address line city street npi ncpdpid ndc dea quantity refills refill days
  supply prescriber patient pharmacy medication drug prescription prescriptions subscription subscriptions identity
  name names first last middle dob birth gender sex strength form unit units us u.s states checksum check out range
  credentials credential token unauthorized authorized authentication key secret forbidden
  bad malformed parse parsed parsing error errors failed failure reason`.split(/\s+/),
);

/** Field names the contract knows (every key of the request schemas): the only path segments shown. */
const FIELD_NAMES: ReadonlySet<string> = (() => {
  const names = new Set<string>(['base', 'prescription', 'subscription']);
  collectKeys(prescriptionRequestSchema, names, 0);
  collectKeys(createSubscriptionBodySchema, names, 0);
  return names;
})();

function collectKeys(schema: unknown, into: Set<string>, depth: number): void {
  const def = (schema as { _zod?: { def?: Record<string, unknown> } } | undefined)?._zod?.def;
  if (!def || depth > 12) return;
  const next = (child: unknown) => collectKeys(child, into, depth + 1);
  switch (def.type) {
    case 'object':
      for (const [key, child] of Object.entries(def.shape as Record<string, z.ZodType>)) {
        into.add(key);
        next(child);
      }
      return;
    case 'array':
      return next(def.element);
    case 'union':
      return (def.options as unknown[]).forEach(next);
    case 'intersection':
      next(def.left);
      return next(def.right);
    case 'pipe':
      next(def.in);
      return next(def.out);
    default:
      if ('innerType' in def) next(def.innerType);
  }
}

const TOKEN_EDGE = /^[("'[{]+|[)"'\]},.;:!?]+$/g;

/**
 * The operator's free text with everything outside the validation vocabulary replaced by `…`, and
 * numbers of more than two digits dropped (a phone, a year), bounded. Pure. A word counts only as
 * written in lowercase, capitalised at the start, or as an acronym: a name echoed as "Long" is dropped.
 */
export function sanitizeOperatorText(text: string): string {
  const out: string[] = [];
  const words = text
    .slice(0, 4 * MAX_TEXT_CHARS)
    .split(/\s+/)
    .filter(Boolean);
  words.forEach((raw, index) => {
    const word = raw.replace(TOKEN_EDGE, '');
    const lower = word.toLowerCase();
    // as validation messages write words: lowercase, capitalised first, or an acronym (JSON, NPI)
    const casingOk =
      word === lower ||
      (index === 0 && word === lower.charAt(0).toUpperCase() + lower.slice(1)) ||
      (word === word.toUpperCase() && word.length <= 7);
    const kept = (casingOk && VOCABULARY.has(lower)) || /^\d{1,2}$/.test(word) || FIELD_PATH.test(word) ? word : '…';
    if (kept === '…' && out[out.length - 1] === '…') return;
    out.push(kept);
  });
  const joined = out.join(' ');
  return joined.length > MAX_TEXT_CHARS ? `${joined.slice(0, MAX_TEXT_CHARS - 1)}…` : joined;
}

// a dotted path whose every segment is a known field name or a small index (prescription.patient.dob)
const FIELD_PATH = {
  test: (word: string) => word.includes('.') && safeFieldPath(word) === word,
};

/** A field path from the operator, when each segment is a field of the contract or an index; else `(field)`. */
export function safeFieldPath(path: string): string {
  const segments = path.split('.');
  const known = segments.length <= 8 && segments.every((s) => FIELD_NAMES.has(s) || /^\d{1,3}$/.test(s));
  return known ? path : '(field)';
}

/**
 * A 422 `errors` object reduced to what may be shown: known field paths, each with at most three
 * sanitised messages (a string or a list of strings; anything else is `(no message)`).
 */
export function sanitizeFieldErrors(errors: Readonly<Record<string, unknown>>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [path, value] of Object.entries(errors).slice(0, MAX_FIELDS)) {
    const list = typeof value === 'string' ? [value] : Array.isArray(value) ? value.filter((m): m is string => typeof m === 'string') : [];
    const messages = list.slice(0, MAX_MESSAGES).map(sanitizeOperatorText);
    const key = safeFieldPath(path);
    out[key] = [...(out[key] ?? []), ...(messages.length > 0 ? messages : ['(no message)'])].slice(0, MAX_MESSAGES);
  }
  return out;
}

/** `path: message; message` per field, for a one-line error. */
export function describeFieldErrors(errors: Readonly<Record<string, readonly string[]>>): string {
  return Object.entries(errors)
    .map(([path, messages]) => `${path}: ${messages.join('; ')}`)
    .join(', ');
}
