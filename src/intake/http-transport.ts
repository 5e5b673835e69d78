import { whenSent } from './request-sent.js';
import type { RequestBudget } from './request-budget.js';
import { z } from 'zod';
import { coerceError } from './errors/coerce-error.js';
import { NetworkError } from './errors/network-error.js';
import type { RequestContext } from './errors/request-context.js';
import { RequestTimeoutError } from './errors/request-timeout-error.js';
import { interpretResponse, type ReadResponse } from './response-reading.js';
import { readCappedText } from './capped-body.js';
import { ResponseTooLargeError } from './errors/response-too-large-error.js';
import { DEFAULT_MAX_RESPONSE_BYTES } from './limits.js';

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

/** One exchange: `path` is relative to the base URL, starts with `/`, and is already URL-encoded. */
export interface TransportRequest<T> {
  readonly method: HttpMethod;
  readonly path: string;
  readonly searchParams?: Record<string, string | number>;
  readonly json?: unknown;
  readonly schema: z.ZodType<T>;
  readonly signal?: AbortSignal;
  /** called once the request's headers are written to the socket (request-sent.ts), when that is reported */
  readonly onSent?: () => void;
}

export interface TransportOptions {
  readonly baseUrl: URL;
  /** full header value, `Bearer ...`; kept only inside the transport */
  readonly authorization: string;
  readonly timeoutMs: number;
  /** no response body is read past this many bytes (MAX_RESPONSE_BYTES; default DEFAULT_MAX_RESPONSE_BYTES) */
  readonly maxResponseBytes?: number | undefined;
  /** the operator host's request budget (OPERATOR_MAX_RPS): every attempt waits for its share first */
  readonly budget?: RequestBudget | undefined;
}

/**
 * Sends exactly one request with fetch (retrying is the caller's single layer, retry-runner.ts) and
 * returns the parsed body or throws a typed error. The timeout covers headers and body, so a response
 * that stalls mid-body fails too; the body is read up to the cap and no further.
 */
export class HttpTransport {
  readonly #headers: Record<string, string>;
  readonly #timeoutMs: number;
  readonly #maxResponseBytes: number;
  /** host:port of the base URL, for network errors (never its path or credentials) */
  readonly #host: string;
  /** the base URL with a trailing slash, to which each request's path is appended */
  readonly #prefix: string;
  readonly #budget: RequestBudget | undefined;

  constructor(options: TransportOptions) {
    this.#budget = options.budget;
    this.#timeoutMs = options.timeoutMs;
    this.#maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.#host = operatorHost(options.baseUrl);
    const base = String(options.baseUrl);
    this.#prefix = base.endsWith('/') ? base : `${base}/`;
    this.#headers = { authorization: options.authorization, accept: 'application/json' };
  }

  /**
   * GET once and hand a 2xx body to `consume` as a stream, never holding it whole (no byte cap: the
   * consumer keeps constant memory; the timeout still covers the whole body). Any other status is
   * read capped and thrown as its typed error, as send() does.
   */
  async stream<T>(
    request: Pick<TransportRequest<unknown>, 'path' | 'searchParams' | 'signal'>,
    consume: (body: ReadableStream<Uint8Array>) => Promise<T>,
  ): Promise<T> {
    const context: RequestContext = { method: 'GET', path: request.path };
    // the budget's wait is not the request's: the timeout starts once it may go out
    await this.#budget?.acquire(request.signal);
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
    let read: ReadResponse;
    try {
      const response = await this.#fetch({ method: 'GET', path: request.path, searchParams: request.searchParams }, signal);
      if (response.status >= 200 && response.status < 300) return await consume(response.body ?? new ReadableStream());
      const body = await readCappedText(response, this.#maxResponseBytes, context);
      read = { status: response.status, retryAfter: response.headers.get('retry-after'), body };
    } catch (error) {
      if (error instanceof ResponseTooLargeError) throw error;
      if (request.signal?.aborted) throw coerceError(request.signal.reason);
      if (timeout.aborted) throw new RequestTimeoutError(context, this.#timeoutMs, { cause: error });
      throw asNetworkError(context, error, this.#host);
    }
    return interpretResponse(context, read, z.never(), Date.now());
  }

  /** Performs the request once; never retries. */
  async send<T>(request: TransportRequest<T>): Promise<T> {
    const context: RequestContext = { method: request.method, path: request.path };
    await this.#budget?.acquire(request.signal);
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
    let read: ReadResponse;
    const forget = request.onSent ? whenSent(this.#urlOf(request), request.onSent) : undefined;
    try {
      const response = await this.#fetch(request, signal);
      const body = await readCappedText(response, this.#maxResponseBytes, context);
      read = { status: response.status, retryAfter: response.headers.get('retry-after'), body };
      // fetch (undici) returns the connection to its pool a tick after the body ends: a request sent in
      // the same tick (the poller's prefetch is) would open a second connection, and alternate between
      // the two from then on, each new one costing a handshake over a real network
      await new Promise<void>((resolve) => setImmediate(resolve));
    } catch (error) {
      if (error instanceof ResponseTooLargeError) throw error;
      if (request.signal?.aborted) throw coerceError(request.signal.reason);
      if (timeout.aborted) throw new RequestTimeoutError(context, this.#timeoutMs, { cause: error });
      throw asNetworkError(context, error, this.#host);
    } finally {
      forget?.();
    }
    return interpretResponse(context, read, request.schema, Date.now());
  }

  #fetch(request: Pick<TransportRequest<unknown>, 'method' | 'path' | 'searchParams' | 'json'>, signal: AbortSignal): Promise<Response> {
    const body = request.json === undefined ? undefined : JSON.stringify(request.json);
    return fetch(this.#urlOf(request), {
      method: request.method,
      headers: body === undefined ? this.#headers : { ...this.#headers, 'content-type': 'application/json' },
      body,
      signal,
      // never follow a redirect: a 307 would re-send the prescription (PHI) and the bearer token to
      // wherever Location points, and a redirected GET /events would be applied from whoever answers.
      // The 3xx comes back as an unexpected status (UnexpectedStatusError), named, not retried
      redirect: 'manual',
    });
  }

  // the prefix and path joined as strings (the path is already encoded), the query from URLSearchParams
  #urlOf(request: Pick<TransportRequest<unknown>, 'path' | 'searchParams'>): URL {
    const url = new URL(`${this.#prefix}${request.path.slice(1)}`);
    if (request.searchParams) url.search = new URLSearchParams(request.searchParams as Record<string, string>).toString();
    return url;
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
