import { context, propagation } from '@opentelemetry/api';
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { inSpan, setAttributes, SpanKind } from '../telemetry/spans.js';

/**
 * Each console request in an HTTP server span named `GET /prescriptions/:external_id` (method and
 * route template, never the path's values or its query), child of the caller's W3C traceparent when
 * the proxy in front sent one. Registered first, so every other middleware runs inside it.
 */
export function requestSpans(): MiddlewareHandler {
  return async (c, next) => {
    const parent = propagation.extract(context.active(), { traceparent: c.req.header('traceparent') });
    await context.with(parent, () =>
      inSpan(
        `${c.req.method}`,
        {
          kind: SpanKind.SERVER,
          attributes: { 'http.request.method': c.req.method, 'url.scheme': new URL(c.req.url).protocol.replace(':', '') },
        },
        async (span) => {
          await next();
          const route = routePath(c, -1);
          if (span.isRecording()) span.updateName(`${c.req.method} ${route}`);
          setAttributes(span, { 'http.route': route, 'http.response.status_code': c.res.status });
          if (c.res.status >= 500) setAttributes(span, { 'error.type': String(c.res.status) });
        },
      ),
    );
  };
}
