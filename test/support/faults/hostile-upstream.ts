import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { ApiAccess } from './sandbox-process.js';

/**
 * A hostile operator on a raw TCP socket: it writes HTTP/1.1 by hand, so it can send what no HTTP
 * library would let it (a Content-Length that lies, a body of any size streamed as it is written).
 * GET {base}/events serves event TEXTS exactly as given (raw JSON such as 1e400, 5,000-level
 * nesting, lone surrogate escapes), iterators being positions in the list (`"3"`), `limit` honoured.
 * Answers queued with `queue()` replace the next GET /events answers, one each.
 */
export interface HostileUpstream extends ApiAccess {
  /** every GET /events received, in order, with what it was answered */
  requests: UpstreamRequest[];
  setEvents(texts: string[]): void;
  /** the next GET /events requests get these answers instead of a page, in order */
  queue(...answers: HostileAnswer[]): void;
  /** hostile answers queued and not yet sent */
  pending(): number;
  close(): Promise<void>;
}

export type HostileAnswer =
  /** a body of `bytes` bytes, `Transfer-Encoding: chunked`, no Content-Length */
  | { kind: 'chunked'; bytes: number }
  /** `Content-Length: declared` followed by `bytes` bytes of body (declared < bytes: a lie) */
  | { kind: 'lying-length'; declared: number; bytes: number };

export interface UpstreamRequest {
  iterator: string | null;
  limit: number;
  answer: 'page' | HostileAnswer['kind'];
  /** body bytes written before the client stopped reading (or all of them) */
  bodyBytesWritten: number;
}

/** The page text at `from`: `{"events":[...texts...],"meta":{...}}`, built by concatenation. */
export function pageText(texts: readonly string[], from: number, limit: number): string {
  const slice = texts.slice(from, from + limit);
  const next = from + slice.length;
  return `{"events":[${slice.join(',')}],"meta":{"limit":${limit},"iterator":${JSON.stringify(String(next))},"done":${next >= texts.length}}}`;
}

const CHUNK = 64 * 1024;
const FILLER_EVENT = Buffer.from(
  `{"id":"filler","name":"accepted","prescription_identity":{},"pharmacy_npi":"1689411712","payload":{"pad":"${'p'.repeat(900)}"}},`,
);

/** 64 KiB of what looks like a page's events, the start of every huge body. */
function fillerChunk(): Buffer {
  const head = Buffer.from('{"events":[');
  const out = Buffer.alloc(CHUNK);
  head.copy(out);
  for (let at = head.length; at < CHUNK; at += FILLER_EVENT.length)
    FILLER_EVENT.copy(out, at, 0, Math.min(FILLER_EVENT.length, CHUNK - at));
  return out;
}

export async function startHostileUpstream(initial: string[] = []): Promise<HostileUpstream> {
  let texts = initial;
  const answers: HostileAnswer[] = [];
  const requests: UpstreamRequest[] = [];
  const sockets = new Set<Socket>();
  const filler = fillerChunk();

  const serve = (socket: Socket, head: string) => {
    const [method = '', target = '/'] = head.split('\r\n')[0]?.split(' ') ?? [];
    const url = new URL(target, 'http://upstream');
    if (method !== 'GET' || !url.pathname.endsWith('/events')) {
      socket.end(
        'HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 21\r\nconnection: close\r\n\r\n{"error":"not found"}',
      );
      return;
    }
    const limit = Number(url.searchParams.get('limit') ?? 250);
    const iterator = url.searchParams.get('iterator');
    const answer = answers.shift();
    const record: UpstreamRequest = { iterator, limit, answer: answer?.kind ?? 'page', bodyBytesWritten: 0 };
    requests.push(record);
    if (!answer) {
      const body = Buffer.from(pageText(texts, Number(iterator ?? 0), limit), 'utf8');
      socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`);
      pump(socket, record, body.length, (n) => body.subarray(record.bodyBytesWritten, record.bodyBytesWritten + n), false);
      return;
    }
    const lengthHeader = answer.kind === 'chunked' ? 'transfer-encoding: chunked' : `content-length: ${answer.declared}`;
    socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n${lengthHeader}\r\nconnection: close\r\n\r\n`);
    pump(socket, record, answer.bytes, (n) => filler.subarray(0, n), answer.kind === 'chunked');
  };

  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // a client that hangs up mid-body is the expected case, not a failure of the server
    socket.on('error', () => {});
    let buffered = '';
    const onData = (data: Buffer) => {
      buffered += data.toString('latin1');
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      serve(socket, buffered.slice(0, end));
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/intake_api/2024-12-10`,
    key: 'hostile-key',
    secret: 'hostile-secret-value-never-logged',
    requests,
    setEvents(next) {
      texts = next;
    },
    queue(...more) {
      answers.push(...more);
    },
    pending: () => answers.length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Writes `total` body bytes from `slice(n)` in 64 KiB writes, waiting for 'drain' (a client that stops
 * reading is never handed the body at once), chunk-framed when `chunked`; stops when the socket closes.
 */
function pump(socket: Socket, record: UpstreamRequest, total: number, slice: (n: number) => Buffer, chunked: boolean): void {
  const next = () => {
    while (record.bodyBytesWritten < total) {
      if (socket.destroyed || !socket.writable) return;
      const n = Math.min(CHUNK, total - record.bodyBytesWritten);
      const data = slice(n);
      record.bodyBytesWritten += n;
      // every part is written (buffered); the last write says whether the buffer is full
      if (chunked) socket.write(`${n.toString(16)}\r\n`);
      if (chunked) socket.write(data);
      if (!socket.write(chunked ? '\r\n' : data)) {
        socket.once('drain', next);
        return;
      }
    }
    if (chunked) socket.end('0\r\n\r\n');
    else socket.end();
  };
  next();
}
