// The bounds every value from the operator is held to before it reaches Postgres or a recursive
// routine (issue 17 part 1). One place, each number with its reason. An event that breaks one is
// quarantined `malformed` (detail: field path and rule, never the value) and the feed moves on; a
// response that breaks MAX_RESPONSE_BYTES fails with ResponseTooLargeError and the worker asks for
// fewer events. docs/guarantees.md lists them for users.

/**
 * Default cap on one response body, in bytes (MAX_RESPONSE_BYTES overrides it). A real page is 250
 * events of 1-3 kB, under 1 MiB: 2 MiB is twice that and holds a 1 MiB payload with its page.
 * The cap is what keeps memory bounded whatever the operator sends: a body is held as bytes, as text
 * and parsed, and the poller keeps up to three pages (two fetched ahead, one applying). Parsed, a
 * body costs up to ~6x its bytes once MAX_RESPONSE_CONTAINERS bounds its objects and arrays (a body
 * of `[]`s costs ~30x without it: 831 MB peak for three 8 MiB pages). Measured worst (three 4 MiB pages
 * of one object with 300k keys held with their prepared copies): 327 MB peak under tsx, so 2 MiB
 * keeps the worst near 210 MB, under the Deployment's 288 Mi; docs/guarantees.md has the figures.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 2 * 1024 * 1024;

/**
 * Objects and arrays one response may open (an upper bound: brackets inside strings count too). A real
 * page has ~20 per event, 5,000 per page; an empty `[]` costs ~90 bytes of heap for its 3 bytes of text,
 * so this bounds the parse's blow-up. Above it the response is refused like a body too large.
 */
export const MAX_RESPONSE_CONTAINERS = 100_000;
/** The setting that overrides DEFAULT_MAX_RESPONSE_BYTES, named by ResponseTooLargeError. */
export const MAX_RESPONSE_BYTES_SETTING = 'MAX_RESPONSE_BYTES';

/** Events one page may carry: the spec's own `limit` maximum. More is refused like a body too large. */
export const MAX_PAGE_EVENTS = 250;

/**
 * One event's serialised size, in UTF-8 bytes. Real events are a few kB; 2 MiB keeps the 1 MiB
 * payload the tests apply (and twice that), and matters once MAX_RESPONSE_BYTES is raised. Above
 * it the event is quarantined with its sha256 and byte size only (storing it could be the very problem).
 */
export const MAX_EVENT_BYTES = 2 * 1024 * 1024;

/**
 * Nesting of objects and arrays inside one event. Real events nest 3-4 levels. JSON.stringify
 * recurses (it throws near 2,000-5,000 levels depending on the stack left) and Postgres' jsonb parser
 * recurses too (stack depth limit, 54001, near 20,000 at max_stack_depth 2MB): 128 stays far below both.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * Event ids: the first column of the (feed, id) primary key and the quarantine key. A btree entry
 * must fit a third of a page (~2,700 bytes, else 54000); 512 UTF-16 units are at most 1,536 bytes.
 */
export const MAX_EVENT_ID_LENGTH = 512;

/** Event names: words like `accepted`. Kept as text and shown in statuses; 128 is plenty. */
export const MAX_EVENT_NAME_LENGTH = 128;

/** api_version (a date, `2024-12-10`) and occurred_at (an ISO-8601 timestamp): short by nature. */
export const MAX_SHORT_TEXT_LENGTH = 64;

/** subscription_id and pharmacy_npi: operator ids, stored as text. */
export const MAX_SUBSCRIPTION_ID_LENGTH = 256;

/**
 * Each prescription_identity field (names, state, dates, NPI, NDC). The identity key joins seven of
 * them and is indexed (events_held_identity_key_idx); 256 is far above any real name.
 */
export const MAX_IDENTITY_FIELD_LENGTH = 256;

/**
 * The normalised identity key in UTF-8 bytes: a btree entry caps near 2,700 bytes (54000), and
 * normalisation (NFC, lower case) can lengthen a string, so the key itself is measured.
 */
export const MAX_IDENTITY_KEY_BYTES = 2048;

/** erx_message_id: indexed alone (events_held_erx_message_id_idx); an NCPDP message id is 35 characters. */
export const MAX_ERX_MESSAGE_ID_LENGTH = 256;

/**
 * meta.iterator: stored as the checkpoint and sent back in the next request's query string (URLs
 * much past 8 kB are refused by servers and proxies). A page with a longer one fails its schema.
 */
export const MAX_ITERATOR_LENGTH = 2048;

/** A quarantine detail (paths and rules, never values): long enough for every issue of one event. */
export const MAX_DETAIL_LENGTH = 1000;

/**
 * A prescription body (or identity) an application hands the SQL API (send_prescription,
 * register_prescription), in UTF-8 bytes of its JSON text. The spec's fields fill a few kB; 64 KiB is
 * ample and keeps what the outbox holds, and what the daemon loads per delivery, small (issue 25).
 * Over it the call is refused with SQLSTATE 22001 naming the argument, and nothing is queued.
 */
export const MAX_API_BODY_BYTES = 64 * 1024;

/**
 * Free text of a prescription (note, sig_text, an allergy's text), in characters (code points): the
 * spec leaves them unbounded; 2048, the bound of an iterator, is pages of text for a pharmacist.
 */
export const MAX_FREE_TEXT_LENGTH = 2048;

/** The keys whose strings are free text (MAX_FREE_TEXT_LENGTH); every other string of a body is held to MAX_IDENTITY_FIELD_LENGTH. */
export const FREE_TEXT_KEYS = ['note', 'sig_text', 'text'] as const;
