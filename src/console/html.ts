import { html as honoHtml, raw } from 'hono/html';
import { escapeToBuffer } from 'hono/utils/html';

/** HTML that is already escaped: the only thing the console's pages concatenate. */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** Escapes text for an element's content or a quoted attribute (Hono's escaping: & < > " '). */
export function escapeHtml(value: unknown): string {
  const buffer: [string] = [''];
  escapeToBuffer(String(value ?? ''), buffer);
  return buffer[0];
}

type Part = SafeHtml | string | number | bigint | boolean | null | undefined | readonly Part[];

/** A part as Hono's template takes it: our SafeHtml as Hono's raw (already escaped), false and null as nothing. */
function honoPart(part: Part): unknown {
  if (part instanceof SafeHtml) return raw(part.text);
  if (Array.isArray(part)) return part.map(honoPart);
  if (typeof part === 'bigint') return part.toString();
  return part;
}

/**
 * The console's one way to write HTML, Hono's `html` template underneath: every interpolated value is
 * escaped unless it is already SafeHtml (the output of another `html` call), so a database value can
 * never become markup. No part is a promise, so Hono renders it at once.
 */
export function html(strings: TemplateStringsArray, ...values: Part[]): SafeHtml {
  const out = honoHtml(strings, ...values.map(honoPart));
  if (out instanceof Promise) throw new TypeError('html: a part was a promise (the console renders synchronously)');
  return new SafeHtml(String(out));
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
