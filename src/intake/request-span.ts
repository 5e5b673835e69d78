import { addEvent, inSpan, setAttributes, SpanKind, type Span } from '../telemetry/spans.js';

/**
 * The route of a request path (`/prescriptions/{external_id}`): span names and `url.template` name
 * the operation, never an identifier. Pure.
 */
export function pathTemplate(path: string): string {
  const [, collection, id] = /^\/([a-z_]+)(?:\/(.+))?$/.exec(path) ?? [];
  if (!collection) return '/';
  if (id === undefined) return `/${collection}`;
  return collection === 'prescriptions' ? '/prescriptions/{external_id}' : `/${collection}/{id}`;
}

/**
 * Runs one logical request (its attempts and the waits between them) in an HTTP client span named
 * `GET /events`, semantic-convention attributes only: method, `url.full` without the path's
 * identifiers or any query (base URL + route template), server address and port, the final status
 * and how many times it was sent again. The span is the active one, so the retry loop adds its
 * retries as events (`retryEvent`).
 */
export function inRequestSpan<T>(baseUrl: URL | undefined, method: string, path: string, body: () => Promise<T>): Promise<T> {
  const template = pathTemplate(path);
  const base = baseUrl ? `${baseUrl.origin}${baseUrl.pathname.replace(/\/+$/, '')}` : undefined;
  const port = baseUrl ? Number(baseUrl.port || (baseUrl.protocol === 'https:' ? 443 : 80)) : undefined;
  return inSpan(
    `${method} ${template}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': method,
        'url.template': template,
        ...(base ? { 'url.full': `${base}${template}`, 'server.address': baseUrl?.hostname, 'server.port': port } : {}),
      },
    },
    async (span) => {
      try {
        const result = await body();
        return result;
      } catch (error) {
        setStatusOf(span, error);
        throw error;
      }
    },
  );
}

/** One retry of the request in `span`: the attempt that failed, why (status or error class) and the wait before the next. */
export function retryEvent(span: Span, retry: { attempt: number; delayMs: number; error: Error }): void {
  const status = (retry.error as { status?: unknown }).status;
  addEvent(span, 'retry', {
    'http.request.resend_count': retry.attempt,
    'intake_sync.retry.delay_ms': Math.round(retry.delayMs),
    'error.type': typeof status === 'number' ? String(status) : retry.error.name,
    ...(typeof status === 'number' ? { 'http.response.status_code': status } : {}),
  });
  setAttributes(span, { 'http.request.resend_count': retry.attempt });
}

function setStatusOf(span: Span, error: unknown): void {
  const status = (error as { status?: unknown }).status;
  if (typeof status === 'number') setAttributes(span, { 'http.response.status_code': status });
}
