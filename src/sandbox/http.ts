import type { IncomingMessage, ServerResponse } from 'node:http';

/** Request bodies above this are refused: the largest valid prescription is a few KB. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Sends a body that is already JSON text (feed pages are joined, never re-stringified). */
export function sendJsonText(res: ServerResponse, status: number, json: string, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json), ...headers });
  res.end(json);
}

/** Sends a value as JSON. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendJsonText(res, status, JSON.stringify(body), headers);
}

/** Sends the `{error}` body the spec uses for 400/401/404. */
export function sendError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: message });
}

export type JsonBody = { ok: true; value: unknown } | { ok: false; reason: string };

/** Reads and parses a JSON request body; `ok: false` for oversized, empty or unparseable bodies. */
export async function readJsonBody(req: IncomingMessage): Promise<JsonBody> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return { ok: false, reason: `request body exceeds ${MAX_BODY_BYTES} bytes` };
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return { ok: false, reason: 'request body is empty; expected JSON' };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, reason: 'request body is not valid JSON' };
  }
}

/** Whether a parsed JSON value is a plain object (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Decodes one path segment; undefined when its percent-encoding is broken. */
export function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
