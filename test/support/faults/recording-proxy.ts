import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the worker made, as seen on the wire. */
export interface RecordedRequest {
  /** Date.now() when the request arrived */
  at: number;
  method: string;
  path: string;
  /** upstream status, or 'reset' / 'aborted' when no status reached the worker */
  outcome: number | 'reset' | 'aborted';
  /** for a 200 event page: whether its body was a usable page */
  body?: 'page' | 'truncated' | 'wrong-shape';
}

/** Classifies a 200 GET /events body the way a strict client would. */
export function classifyPageBody(text: string): 'page' | 'truncated' | 'wrong-shape' {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return 'truncated';
  }
  const ok =
    parsed !== null &&
    typeof parsed === 'object' &&
    Array.isArray((parsed as { events?: unknown }).events) &&
    typeof (parsed as { meta?: { iterator?: unknown } }).meta?.iterator === 'string';
  return ok ? 'page' : 'wrong-shape';
}

export interface RecordingProxy {
  /** the sandbox base URL rewritten to go through the proxy */
  baseUrl: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/**
 * A pass-through HTTP proxy in front of the sandbox that records every request
 * with its arrival time: the harness's own count of what the worker sent (no
 * hot loop, backoff spacing), independent of the worker's metrics. Resets and
 * hangs are passed through as resets and hangs.
 */
export async function startRecordingProxy(targetBaseUrl: string): Promise<RecordingProxy> {
  const target = new URL(targetBaseUrl);
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const record: RecordedRequest = { at: Date.now(), method: req.method ?? '?', path: req.url ?? '', outcome: 'aborted' };
    requests.push(record);
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        record.outcome = answer.statusCode ?? 'reset';
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        if (answer.statusCode === 200 && record.path.includes('/events')) {
          const chunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => chunks.push(chunk));
          answer.on('end', () => (record.body = classifyPageBody(Buffer.concat(chunks).toString('utf8'))));
        }
        answer.pipe(res);
        answer.on('error', () => res.destroy());
        answer.on('aborted', () => res.destroy());
      },
    );
    let workerGaveUp = false;
    upstream.on('error', () => {
      // destroying upstream after the worker gave up also lands here: that was the worker's abort
      if (!workerGaveUp) record.outcome = 'reset';
      req.socket.destroy();
    });
    // the worker gave up (its timeout): give up upstream too, as a direct connection would
    res.on('close', () => {
      if (!res.writableFinished) workerGaveUp = true;
      upstream.destroy();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const proxied = new URL(targetBaseUrl);
  proxied.host = `127.0.0.1:${port}`;
  return {
    baseUrl: proxied.toString().replace(/\/+$/, ''),
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
