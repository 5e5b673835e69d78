import type { Sandbox } from '../../../src/sandbox/server.js';
import { bearerToken } from '../../../src/sandbox/auth.js';

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** Calls the sandbox over a real socket with the first (or given) credential. */
export async function call(
  sandbox: Sandbox,
  method: string,
  path: string,
  options: {
    body?: unknown;
    rawBody?: string;
    authorization?: string | null;
    credential?: { key: string; secret: string };
    /** the version whose base path to call (default: the sandbox's default one) */
    version?: string;
  } = {},
): Promise<ApiResponse> {
  const credential = options.credential ?? sandbox.credentials[0]!;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.authorization !== null)
    headers.authorization = options.authorization ?? `Bearer ${bearerToken(credential.key, credential.secret)}`;
  const base = options.version === undefined ? sandbox.baseUrl : sandbox.baseUrlFor(options.version);
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
  });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, body };
}

/** Reads the whole feed with the given page size; returns the raw event objects in order. */
export async function readFeed(sandbox: Sandbox, limit: number, version?: string): Promise<any[]> {
  const events: any[] = [];
  let iterator: string | undefined;
  for (let page = 0; page < 10_000; page++) {
    const res = await call(
      sandbox,
      'GET',
      `/events?limit=${limit}${iterator ? `&iterator=${iterator}` : ''}`,
      version === undefined ? {} : { version },
    );
    if (res.status !== 200) throw new Error(`GET /events answered ${res.status}`);
    events.push(...res.body.events);
    iterator = res.body.meta.iterator;
    if (res.body.meta.done) return events;
  }
  throw new Error('feed did not finish');
}

/** POSTs to an admin endpoint. */
export async function admin(sandbox: Sandbox, name: string, body?: unknown): Promise<ApiResponse> {
  const res = await fetch(`${sandbox.origin}/_sandbox/${name}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: JSON.parse(text) };
}

export const MINUTE = 60_000;
