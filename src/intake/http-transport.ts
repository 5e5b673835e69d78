import ky, { type KyInstance } from 'ky';
import type { z } from 'zod';
import { coerceError } from './errors/coerce-error.js';
import { NetworkError } from './errors/network-error.js';
import type { RequestContext } from './errors/request-context.js';
import { RequestTimeoutError } from './errors/request-timeout-error.js';
import { interpretResponse, type ReadResponse } from './response-reading.js';

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

/** One exchange: `path` is relative to the base URL, starts with `/`, and is already URL-encoded. */
export interface TransportRequest<T> {
  readonly method: HttpMethod;
  readonly path: string;
  readonly searchParams?: Record<string, string | number>;
  readonly json?: unknown;
  readonly schema: z.ZodType<T>;
  readonly signal?: AbortSignal;
}

export interface TransportOptions {
  readonly baseUrl: URL;
  /** full header value, `Bearer ...`; kept only inside the ky instance */
  readonly authorization: string;
  readonly timeoutMs: number;
}

/**
 * Sends exactly one request (ky with retries off: retrying is the caller's
 * single layer) and returns the parsed body or throws a typed error. The
 * timeout covers headers and body, so a response that stalls mid-body fails too.
 */
export class HttpTransport {
  readonly #ky: KyInstance;
  readonly #timeoutMs: number;
  /** host:port of the base URL, for network errors (never its path or credentials) */
  readonly #host: string;

  constructor(options: TransportOptions) {
    this.#timeoutMs = options.timeoutMs;
    this.#host = operatorHost(options.baseUrl);
    this.#ky = ky.create({
      prefixUrl: options.baseUrl,
      retry: 0,
      timeout: false,
      throwHttpErrors: false,
      headers: { authorization: options.authorization, accept: 'application/json' },
    });
  }

  /** Performs the request once; never retries. */
  async send<T>(request: TransportRequest<T>): Promise<T> {
    const context: RequestContext = { method: request.method, path: request.path };
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
    let read: ReadResponse;
    try {
      const response = await this.#ky(request.path.slice(1), {
        method: request.method,
        searchParams: request.searchParams,
        json: request.json,
        signal,
      });
      read = { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.text() };
      // fetch (undici) returns the connection to its pool a tick after the body ends: a request sent in
      // the same tick (the poller's prefetch is) would open a second connection, and alternate between
      // the two from then on, each new one costing a handshake over a real network
      await new Promise<void>((resolve) => setImmediate(resolve));
    } catch (error) {
      if (request.signal?.aborted) throw coerceError(request.signal.reason);
      if (timeout.aborted) throw new RequestTimeoutError(context, this.#timeoutMs, { cause: error });
      throw asNetworkError(context, error, this.#host);
    }
    return interpretResponse(context, read, request.schema, Date.now());
  }
}

// fetch reports every connection-level failure as a TypeError ("fetch failed",
// "terminated") with the system or undici error in `cause`.
function asNetworkError(context: RequestContext, error: unknown, host: string): Error {
  if (!(error instanceof TypeError)) return coerceError(error);
  return new NetworkError(context, findErrorCode(error), { cause: error }, host);
}

/** host:port of a base URL, the default port spelled out (443, 80) so the message says what was dialled. */
function operatorHost(baseUrl: URL): string {
  return `${baseUrl.hostname}:${baseUrl.port || (baseUrl.protocol === 'https:' ? '443' : '80')}`;
}

function findErrorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}
