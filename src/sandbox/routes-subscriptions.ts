import { createSubscriptionBodySchema } from '../intake/index.js';
import { isJsonObject, readJsonBody, sendError, sendJson } from './http.js';
import { methodNotAllowed, type RouteContext } from './route-context.js';
import type { SubscriptionRecord } from './tenant.js';
import { errorsByField } from './validation-errors.js';

function subscriptionBody(subscription: SubscriptionRecord): { subscription: unknown } {
  return {
    subscription: {
      id: subscription.id,
      backfill_previous_events: subscription.backfillPreviousEvents,
      api_version: subscription.apiVersion,
      cancelled_at: subscription.cancelledAt,
      prescription_identity: { ...subscription.identity, erx_message_id: subscription.identity.erx_message_id ?? null },
    },
  };
}

async function create(ctx: RouteContext): Promise<void> {
  const body = await readJsonBody(ctx.req);
  if (!body.ok) return sendError(ctx.res, 400, body.reason);
  if (!isJsonObject(body.value) || !isJsonObject(body.value.subscription)) {
    return sendError(ctx.res, 400, 'request body must be a JSON object with a "subscription" object');
  }
  const parsed = createSubscriptionBodySchema.safeParse(body.value);
  if (!parsed.success) return sendJson(ctx.res, 422, { errors: errorsByField(parsed.error.issues, body.value) });
  const { prescription_identity: identity, backfill_previous_events: backfill } = parsed.data.subscription;
  const subscription = ctx.store.createSubscription(
    ctx.tenant,
    { ...identity, erx_message_id: identity.erx_message_id ?? null },
    backfill ?? null,
    ctx.apiVersion,
  );
  sendJson(ctx.res, 201, subscriptionBody(subscription));
}

/** /subscriptions and /subscriptions/{id}. */
export async function routeSubscriptions(ctx: RouteContext, rest: readonly string[]): Promise<void> {
  const method = ctx.req.method ?? 'GET';
  if (rest.length === 0) return method === 'POST' ? create(ctx) : methodNotAllowed(ctx, 'POST');
  const id = rest[0];
  if (rest.length !== 1 || id === undefined) return sendError(ctx.res, 404, `no route for ${ctx.url.pathname}`);
  if (method !== 'GET' && method !== 'DELETE') return methodNotAllowed(ctx, 'GET, DELETE');
  const subscription = method === 'DELETE' ? ctx.store.cancelSubscription(ctx.tenant, id) : ctx.tenant.subscriptions.get(id);
  if (!subscription) return sendError(ctx.res, 404, `subscription ${id} not found`);
  sendJson(ctx.res, 200, subscriptionBody(subscription));
}
