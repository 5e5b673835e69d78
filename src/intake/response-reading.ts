import type { z } from 'zod';
import { parseRetryAfter } from './retry-after.js';
import { errorBodySchema, validationErrorBodySchema } from './error-bodies.js';
import { BadRequestError } from './errors/bad-request-error.js';
import { NotFoundError } from './errors/not-found-error.js';
import type { RequestContext } from './errors/request-context.js';
import { ResponseSchemaError } from './errors/response-schema-error.js';
import { schemaIssuesFrom, WHOLE_BODY_PATH } from './errors/schema-issues.js';
import { UnauthorizedError } from './errors/unauthorized-error.js';
import { UnexpectedStatusError } from './errors/unexpected-status-error.js';
import { UnprocessableEntityError } from './errors/unprocessable-entity-error.js';
import { UpstreamError } from './errors/upstream-error.js';

/** A response fully read off the wire: nothing here touches a socket. */
export interface ReadResponse {
  readonly status: number;
  readonly retryAfter: string | null;
  readonly body: string;
}

/**
 * Turns a read response into the schema's output, or the typed error for its
 * status. `nowMs` is the wall clock, for a Retry-After given as a date.
 */
export function interpretResponse<T>(context: RequestContext, response: ReadResponse, schema: z.ZodType<T>, nowMs: number): T {
  const { status } = response;
  if (status >= 200 && status < 300) return parseBody(context, response, schema);
  switch (status) {
    case 400:
      return fail(new BadRequestError(context, serverMessage(response.body)));
    case 401:
      return fail(new UnauthorizedError(context, serverMessage(response.body)));
    case 404:
      return fail(new NotFoundError(context, serverMessage(response.body)));
    case 422:
      return fail(new UnprocessableEntityError(context, fieldErrors(response.body)));
  }
  if (status === 429 || status >= 500) {
    // Retry-After is meaningful on 429 and 503 only (RFC 9110 §10.2.3, RFC 6585)
    const honoured = status === 429 || status === 503 ? parseRetryAfter(response.retryAfter, nowMs) : undefined;
    return fail(new UpstreamError(context, status, honoured));
  }
  return fail(new UnexpectedStatusError(context, status));
}

function fail(error: Error): never {
  throw error;
}

function parseBody<T>(context: RequestContext, response: ReadResponse, schema: z.ZodType<T>): T {
  let json: unknown;
  try {
    json = JSON.parse(response.body);
  } catch {
    // no cause: SyntaxError messages quote the body, which may hold PHI
    throw new ResponseSchemaError(context, response.status, [{ path: WHOLE_BODY_PATH, message: 'is not JSON' }]);
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  throw new ResponseSchemaError(context, response.status, schemaIssuesFrom(parsed.error), { cause: parsed.error });
}

function tryJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

// error bodies are best effort: a proxy's HTML 404 is still a 404
function serverMessage(body: string): string | undefined {
  const parsed = errorBodySchema.safeParse(tryJson(body));
  return parsed.success ? parsed.data.error : undefined;
}

function fieldErrors(body: string): Record<string, unknown> {
  const parsed = validationErrorBodySchema.safeParse(tryJson(body));
  return parsed.success ? parsed.data.errors : {};
}
