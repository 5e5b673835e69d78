import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { FaultControl } from './fault-control.js';
import { InvalidVersionError } from './invalid-version-error.js';
import { readJsonBody, sendError, sendJson } from './http.js';
import { SeedConflictError } from './seed-conflict-error.js';
import type { SandboxStore } from './store.js';
import { UnknownCredentialError } from './unknown-credential-error.js';

/** Admin endpoints live beside the API, unauthenticated: the sandbox is a local test tool. */
export const ADMIN_BASE_PATH = '/_sandbox';

export interface AdminDeps {
  store: SandboxStore;
  faults: FaultControl;
  /** moves sandbox time forward; returns the new now (epoch ms) */
  advanceClock(ms: number): number;
}

const clockBody = z.strictObject({ advance_ms: z.number().int().min(0) });
const seedBody = z.strictObject({
  key: z.string().min(1).optional(),
  count: z.number().int().min(0).max(5_000_000),
  reject_every: z.number().int().min(0).optional(),
  prefix: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,40}$/)
    .optional(),
});
// api_version: the version whose GET /events lists them (separate listing); the events' own api_version is whatever they say
const injectBody = z.strictObject({
  key: z.string().min(1).optional(),
  api_version: z.string().min(1).optional(),
  events: z.array(z.unknown()),
});
const credentialsBody = z.strictObject({
  revoke: z.string().min(1).optional(),
  add: z.strictObject({ key: z.string().min(1), secret: z.string().min(1) }).optional(),
});

type Handler = (body: unknown, deps: AdminDeps) => unknown;

const POST_HANDLERS = new Map<string, Handler>(
  Object.entries({
    faults: (body, deps) => deps.faults.update(body),
    clock: (body, deps) => {
      const { advance_ms } = clockBody.parse(body);
      const now = deps.advanceClock(advance_ms);
      return { now: new Date(now).toISOString(), now_ms: now };
    },
    seed: (body, deps) => {
      const input = seedBody.parse(body);
      return deps.store.seedBulk({ key: input.key, count: input.count, rejectEvery: input.reject_every, prefix: input.prefix });
    },
    inject: (body, deps) => {
      const input = injectBody.parse(body);
      const key = input.key ?? deps.store.credentialKeys()[0];
      if (key === undefined) throw new UnknownCredentialError('(none)');
      if (input.api_version !== undefined && !deps.store.versions.includes(input.api_version)) {
        throw new InvalidVersionError(input.api_version, `not served (serving ${deps.store.versions.join(', ')})`);
      }
      deps.store.injectRawEvents(key, input.events, input.api_version);
      return { appended: input.events.length };
    },
    credentials: (body, deps) => {
      const input = credentialsBody.parse(body);
      if (input.revoke !== undefined) deps.store.revokeCredential(input.revoke);
      if (input.add !== undefined) deps.store.addCredential(input.add);
      return { keys: deps.store.credentialKeys() };
    },
  } satisfies Record<string, Handler>),
);

function statusFor(error: unknown): number {
  if (error instanceof z.ZodError || error instanceof InvalidVersionError) return 400;
  if (error instanceof UnknownCredentialError) return 404;
  if (error instanceof SeedConflictError) return 409;
  return 500;
}

/** Serves /_sandbox/* (JSON in, JSON out). */
export async function routeAdmin(req: IncomingMessage, res: ServerResponse, url: URL, deps: AdminDeps): Promise<void> {
  const name = url.pathname.slice(ADMIN_BASE_PATH.length + 1);
  if (req.method === 'GET' && name === 'stats') return sendJson(res, 200, deps.store.stats());
  if (req.method === 'GET' && name === 'faults') return sendJson(res, 200, deps.faults.config);
  if (req.method === 'GET' && name === 'prescription-requests') {
    return sendJson(res, 200, { external_ids: deps.store.requests.report(url.searchParams.get('prefix') ?? '') });
  }
  const handler = req.method === 'POST' ? POST_HANDLERS.get(name) : undefined;
  if (!handler) return sendError(res, 404, `no admin route ${req.method ?? '?'} ${url.pathname}`);
  const body = await readJsonBody(req);
  if (!body.ok) return sendError(res, 400, body.reason);
  try {
    sendJson(res, 200, handler(body.value, deps));
  } catch (error) {
    const status = statusFor(error);
    if (status === 500) throw error;
    const detail = error instanceof z.ZodError ? { issues: error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`) } : {};
    sendJson(res, status, { error: error instanceof Error ? error.message : String(error), ...detail });
  }
}
