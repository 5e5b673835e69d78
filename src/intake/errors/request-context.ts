/** Which call failed: method and path only (no query string, no body). */
export interface RequestContext {
  readonly method: string;
  readonly path: string;
}

/** `GET /events/ev_1`: the prefix every request error message starts with. */
export function describeRequest(context: RequestContext): string {
  return `${context.method} ${context.path}`;
}
