import type { RequestContext } from './errors/request-context.js';
import { ResponseTooLargeError } from './errors/response-too-large-error.js';
import { MAX_RESPONSE_BYTES_SETTING, MAX_RESPONSE_CONTAINERS } from './limits.js';

/**
 * Reads a response body as UTF-8 text, refusing it once it passes `capBytes`: first by its declared
 * Content-Length (nothing read), then while streaming (the stream is cancelled at the first chunk past
 * the cap). Counts the bytes after decompression, so a small gzip bomb is refused too.
 */
export async function readCappedText(response: Response, capBytes: number, context: RequestContext): Promise<string> {
  const declared = response.headers.get('content-length');
  // a compressed body's Content-Length is its wire size, which the decompressed one can only exceed
  if (declared !== null && /^\d{1,15}$/.test(declared.trim()) && Number(declared) > capBytes) {
    await response.body?.cancel().catch(() => {});
    throw new ResponseTooLargeError(context, capBytes, Number(declared), MAX_RESPONSE_BYTES_SETTING);
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > capBytes) {
      await reader.cancel().catch(() => {});
      throw new ResponseTooLargeError(context, capBytes, undefined, MAX_RESPONSE_BYTES_SETTING);
    }
    chunks.push(value);
  }
  // one decode of the whole body, as response.text() does (a BOM is dropped, bad bytes become U+FFFD)
  const text = new TextDecoder().decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total));
  if (opensMoreThan(text, MAX_RESPONSE_CONTAINERS)) {
    throw new ResponseTooLargeError(context, capBytes, undefined, `${MAX_RESPONSE_CONTAINERS} objects and arrays per response`);
  }
  return text;
}

/** Whether `text` holds more than `max` `[` and `{` (inside strings too: an upper bound), counted natively by indexOf. */
function opensMoreThan(text: string, max: number): boolean {
  let count = 0;
  for (const bracket of ['[', '{']) {
    for (let at = text.indexOf(bracket); at !== -1; at = text.indexOf(bracket, at + 1)) {
      if (++count > max) return true;
    }
  }
  return false;
}
