import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in operator serving GET /events from event TEXTS, exactly as given: raw JSON that no
 * JSON.stringify would write (1e400, a 100,000-level nesting, duplicate keys, lone surrogate escapes).
 * Iterators are positions in the list (`"3"`); `limit` is honoured unless `ignoreLimit`. Each request's
 * limit is recorded. Close it with close().
 */
export interface HostileFeedServer {
  baseUrl: string;
  /** the limits of the GET /events requests received, in order */
  limits: number[];
  /** replaces the served event texts */
  setEvents(texts: string[]): void;
  close(): Promise<void>;
}

export interface HostileFeedOptions {
  /** send Content-Length (default) or stream the body chunked without it */
  contentLength?: boolean;
  /** put `meta` before `events` in the body (default after) */
  metaFirst?: boolean;
  ignoreLimit?: boolean;
}

/** The page text at `from`: `{"events":[...texts...],"meta":{...}}`, built by concatenation. */
export function pageText(texts: readonly string[], from: number, limit: number, metaFirst = false): string {
  const slice = texts.slice(from, from + limit);
  const next = from + slice.length;
  const meta = `"meta":{"limit":${limit},"iterator":${JSON.stringify(String(next))},"done":${next >= texts.length}}`;
  const events = `"events":[${slice.join(',')}]`;
  return metaFirst ? `{${meta},${events}}` : `{${events},${meta}}`;
}

export async function startHostileFeedServer(initial: string[], options: HostileFeedOptions = {}): Promise<HostileFeedServer> {
  let texts = initial;
  const limits: number[] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (!url.pathname.endsWith('/events')) {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    const limit = Number(url.searchParams.get('limit') ?? 250);
    limits.push(limit);
    const from = Number(url.searchParams.get('iterator') ?? 0);
    const body = Buffer.from(pageText(texts, from, options.ignoreLimit ? texts.length : limit, options.metaFirst), 'utf8');
    const headers: Record<string, string | number> = { 'content-type': 'application/json' };
    if (options.contentLength !== false) headers['content-length'] = body.length;
    response.writeHead(200, headers);
    // in 64 KiB writes: a client that stops reading is not handed the whole body at once
    let offset = 0;
    const pump = () => {
      while (offset < body.length) {
        const chunk = body.subarray(offset, offset + 65_536);
        offset += chunk.length;
        if (!response.write(chunk)) {
          response.once('drain', pump);
          return;
        }
      }
      response.end();
    };
    response.on('error', () => {});
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/intake_api/2024-12-10`,
    limits,
    setEvents(next) {
      texts = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
