import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultControl } from './fault-control.js';
import { sendError } from './http.js';
import type { SandboxStore } from './store.js';
import type { Tenant } from './tenant.js';

/** What an authenticated API route handler gets. */
export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  tenant: Tenant;
  /** the version whose base path the request came under: what it creates carries it, what it lists is that version's */
  apiVersion: string;
  store: SandboxStore;
  faults: FaultControl;
}

/** 405 for a known path with an unsupported method. */
export function methodNotAllowed(ctx: RouteContext, allowed: string): void {
  ctx.res.setHeader('allow', allowed);
  sendError(ctx.res, 405, `method ${ctx.req.method ?? '?'} not allowed on ${ctx.url.pathname}; allowed: ${allowed}`);
}
