import { pickEventListFault } from './faults.js';
import { sendError, sendJsonText } from './http.js';
import { decodeIterator, encodeIterator } from './iterator.js';
import { decidePageStart, EXPIRED_ITERATOR_MESSAGE } from './retention.js';
import { methodNotAllowed, type RouteContext } from './route-context.js';

export const MAX_PAGE_LIMIT = 250;

/** Parses `limit`: absent means 250; anything but an integer 1..250 is refused. */
export function parseLimit(raw: string | null): number | undefined {
  if (raw === null) return MAX_PAGE_LIMIT;
  if (!/^\d{1,3}$/.test(raw)) return undefined;
  const limit = Number(raw);
  return limit >= 1 && limit <= MAX_PAGE_LIMIT ? limit : undefined;
}

// Bodies a confused proxy or a future API might send: valid JSON, wrong shape.
const WRONG_SHAPES = ['{"data":[],"next":null}', '[]', '{"events":{"items":[]},"meta":null}', '{"events":[],"meta":{"iterator":42}}'];

function listEvents(ctx: RouteContext): void {
  const limit = parseLimit(ctx.url.searchParams.get('limit'));
  if (limit === undefined) return sendError(ctx.res, 400, `limit must be an integer from 1 to ${MAX_PAGE_LIMIT}`);
  const rawIterator = ctx.url.searchParams.get('iterator');
  const feed = ctx.tenant.feedFor(ctx.apiVersion);
  const requested = rawIterator === null ? null : (decodeIterator(rawIterator, ctx.store.instance) ?? undefined);
  const mode = ctx.store.retention?.expiredIterator ?? 'error';
  const decision = decidePageStart(requested, ctx.store.oldestRetained(feed), feed.length, mode);
  if (!decision.ok)
    return sendError(ctx.res, 400, decision.reason === 'expired' ? EXPIRED_ITERATOR_MESSAGE : 'iterator is not valid for this feed');
  const start = decision.start;
  const entries = feed.slice(start, start + limit);
  const end = start + entries.length;
  // 'at' mode (fault): the iterator points at the last returned event, so the next page repeats it
  const next = ctx.faults.config.iteratorMode === 'at' && entries.length > 0 ? end - 1 : end;
  const body = `{"events":[${entries.join(',')}],"meta":{"limit":${limit},"iterator":"${encodeIterator(next, ctx.store.instance)}","done":${end >= feed.length}}}`;
  const fault = pickEventListFault(ctx.faults.config, ctx.faults.transportRandom);
  if (fault === 'truncated') return sendJsonText(ctx.res, 200, body.slice(0, Math.max(1, Math.floor(body.length / 2))));
  if (fault === 'wrong-shape') {
    return sendJsonText(ctx.res, 200, WRONG_SHAPES[Math.floor(ctx.faults.transportRandom() * WRONG_SHAPES.length)] ?? '[]');
  }
  sendJsonText(ctx.res, 200, body);
}

/** /events and /events/{id}. */
export function routeEvents(ctx: RouteContext, rest: readonly string[]): void {
  if (ctx.req.method !== 'GET') return methodNotAllowed(ctx, 'GET');
  if (rest.length === 0) return listEvents(ctx);
  const id = rest[0];
  if (rest.length !== 1 || id === undefined) return sendError(ctx.res, 404, `no route for ${ctx.url.pathname}`);
  const feed = ctx.tenant.feedFor(ctx.apiVersion);
  const entry = feed.entryById(id, ctx.store.oldestRetained(feed));
  if (entry === undefined) return sendError(ctx.res, 404, `event ${id} not found`);
  sendJsonText(ctx.res, 200, `{"event":${entry}}`);
}
