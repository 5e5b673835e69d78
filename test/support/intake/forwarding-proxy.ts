import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the proxy saw, in order. */
export interface SeenRequest {
  readonly method: string;
  /** path without the query string, relative to the target's base path */
  readonly path: string;
}

export interface ForwardingProxy {
  /** same base path as the target, on the proxy's port */
  readonly baseUrl: string;
  readonly seen: readonly SeenRequest[];
  count(method: string, path: string): number;
  close(): Promise<void>;
}

export interface ForwardingProxyOptions {
  /**
   * Return true to forward the request, let the target answer in full (so it
   * has applied the request), and then destroy the client's socket instead of
   * relaying the answer: "the request landed, the response was lost".
   */
  loseResponse?: (request: SeenRequest, index: number) => boolean;
  /**
   * Return a status and JSON body to answer without forwarding: plays an
   * operator whose read side lags its write side (a POST not yet visible).
   */
  answerLocally?: (request: SeenRequest, index: number) => { status: number; body: unknown } | undefined;
}

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/**
 * A tiny HTTP proxy in front of the sandbox: counts requests and can lose a
 * response after the sandbox stored the request, which the sandbox's own
 * fault injection cannot express (its faults strike before handling).
 */
export async function startForwardingProxy(targetBaseUrl: string, options: ForwardingProxyOptions = {}): Promise<ForwardingProxy> {
  const target = new URL(targetBaseUrl);
  const basePath = target.pathname.replace(/\/$/, '');
  const seen: SeenRequest[] = [];

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const entry: SeenRequest = { method: req.method ?? 'GET', path: url.pathname.slice(basePath.length) };
    const index = seen.push(entry) - 1;
    const body = await readAll(req);
    const local = options.answerLocally?.(entry, index);
    if (local) {
      res.writeHead(local.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(local.body));
      return;
    }
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      async (answer) => {
        const answerBody = await readAll(answer);
        if (options.loseResponse?.(entry, index)) {
          req.socket.destroy();
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.end(answerBody);
      },
    );
    upstream.on('error', () => req.socket.destroy());
    upstream.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}${basePath}`,
    seen,
    count: (method, path) => seen.filter((s) => s.method === method && s.path === path).length,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
