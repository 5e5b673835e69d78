// Postgres text refuses NUL (22021) and the driver turns an unpaired surrogate into U+FFFD, so a value
// that holds either cannot be stored as given: an iterator would come back changed, an id would fail the page.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when Postgres can store `text` exactly as it is (no NUL, no unpaired surrogate). */
export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && !LONE_SURROGATE.test(text);
}

/** The rule isStorableText checks, as a schema message. */
export const STORABLE_TEXT_RULE = 'contains NUL or an unpaired surrogate, which Postgres cannot store';
