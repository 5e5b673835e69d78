import { createPrescriptionBodySchema } from '../intake/index.js';
import { dropsAfterProcessing } from './faults.js';
import { isJsonObject, readJsonBody, sendError, sendJson } from './http.js';
import { toPrescriptionResponse } from './response-shape.js';
import { methodNotAllowed, type RouteContext } from './route-context.js';
import type { PrescriptionRecord } from './tenant.js';
import { errorsByField } from './validation-errors.js';

function prescriptionBody(ctx: RouteContext, record: PrescriptionRecord): { prescription: unknown } {
  return { prescription: toPrescriptionResponse(ctx.store.requestOf(record), record.cancellationRequestedAt) };
}

/**
 * The dropAfterProcessingRate fault: the change is applied, then the connection is cut before the
 * answer, so the client cannot tell whether it landed. True when it struck (nothing more to send).
 */
function dropAfterProcessing(ctx: RouteContext): boolean {
  if (!dropsAfterProcessing(ctx.faults.config, ctx.faults.transportRandom)) return false;
  ctx.req.socket.destroy();
  return true;
}

async function create(ctx: RouteContext): Promise<void> {
  const body = await readJsonBody(ctx.req);
  if (!body.ok) return sendError(ctx.res, 400, body.reason);
  if (!isJsonObject(body.value) || !isJsonObject(body.value.prescription)) {
    return sendError(ctx.res, 400, 'request body must be a JSON object with a "prescription" object');
  }
  const parsed = createPrescriptionBodySchema.safeParse(body.value);
  if (!parsed.success) return sendJson(ctx.res, 422, { errors: errorsByField(parsed.error.issues, body.value) });
  const record = ctx.store.createPrescription(ctx.tenant, parsed.data.prescription, ctx.apiVersion);
  if (dropAfterProcessing(ctx)) return;
  if (!record) return sendJson(ctx.res, 422, { errors: { 'prescription.external_id': ['has already been taken'] } });
  sendJson(ctx.res, 201, prescriptionBody(ctx, record));
}

/** /prescriptions and /prescriptions/{external_id}. */
export async function routePrescriptions(ctx: RouteContext, rest: readonly string[]): Promise<void> {
  const method = ctx.req.method ?? 'GET';
  if (rest.length === 0) return method === 'POST' ? create(ctx) : methodNotAllowed(ctx, 'POST');
  const externalId = rest[0];
  if (rest.length !== 1 || externalId === undefined) return sendError(ctx.res, 404, `no route for ${ctx.url.pathname}`);
  if (method !== 'GET' && method !== 'DELETE') return methodNotAllowed(ctx, 'GET, DELETE');
  const record = method === 'DELETE' ? ctx.store.cancelPrescription(ctx.tenant, externalId) : ctx.tenant.prescriptions.get(externalId);
  if (method === 'DELETE' && dropAfterProcessing(ctx)) return;
  if (!record) return sendError(ctx.res, 404, `prescription ${externalId} not found`);
  sendJson(ctx.res, 200, prescriptionBody(ctx, record));
}
