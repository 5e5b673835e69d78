import { subscribe } from 'node:diagnostics_channel';

/**
 * Tells a caller when a request's headers were written to its socket, from undici's diagnostics channel
 * (`undici:client:sendHeaders`, which Node's fetch publishes). fetch resolves only with the response,
 * and the request leaves a few event-loop turns after fetch() is called: the poller waits for this
 * before validating and applying a page, so its prefetch is on the wire first (docs/performance.md,
 * WAN). Only a hint: a request never reported (another fetch implementation) is simply waited for by
 * its response instead.
 */
const waiting = new Map<string, Array<() => void>>();
let subscribed = false;

interface SendHeadersMessage {
  request?: { origin?: unknown; path?: unknown };
}

function onSendHeaders(message: unknown): void {
  const request = (message as SendHeadersMessage).request;
  if (!request || typeof request.path !== 'string') return;
  const key = `${String(request.origin)}${request.path}`;
  const callbacks = waiting.get(key);
  const callback = callbacks?.shift();
  if (callbacks?.length === 0) waiting.delete(key);
  callback?.();
}

/** The key a request is reported under: the URL's origin, path and query as undici writes them. */
export function sentKey(url: URL): string {
  return `${url.origin}${url.pathname}${url.search}`;
}

/** Calls `callback` once, when the next request to `url` is written; the returned function forgets it. */
export function whenSent(url: URL, callback: () => void): () => void {
  if (!subscribed) {
    subscribe('undici:client:sendHeaders', onSendHeaders);
    subscribed = true;
  }
  const key = sentKey(url);
  const callbacks = waiting.get(key) ?? [];
  callbacks.push(callback);
  waiting.set(key, callbacks);
  return () => {
    const list = waiting.get(key);
    const at = list?.indexOf(callback) ?? -1;
    if (list && at >= 0) list.splice(at, 1);
    if (list?.length === 0) waiting.delete(key);
  };
}
