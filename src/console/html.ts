/** HTML that is already escaped: the only thing the console's pages concatenate. */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/** Escapes text for an element's content or a quoted attribute. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c);
}

type Part = SafeHtml | string | number | bigint | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof SafeHtml) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(part);
}

/**
 * The console's one way to write HTML: every interpolated value is escaped unless it is already
 * SafeHtml (the output of another `html` call), so a database value can never become markup.
 */
export function html(strings: TemplateStringsArray, ...values: Part[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i] as Part) + (strings[i + 1] ?? '');
  return new SafeHtml(out);
}

/** A URL path segment (feed names, event ids, external ids are identifiers, never patient data). */
export function pathSegment(value: string): string {
  return encodeURIComponent(value);
}

/** A query string from defined, non-empty values. */
export function queryString(params: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(key, value);
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}
