/** Key and secret carried by a bearer token. */
export interface BearerCredential {
  key: string;
  secret: string;
}

/**
 * Parses `Authorization: Bearer <base64(key:secret)>`. Undefined for a missing
 * header, another scheme, bad base64 or a token without a colon.
 */
export function parseBearer(header: string | undefined): BearerCredential | undefined {
  const match = header ? /^Bearer\s+([A-Za-z0-9+/]+={0,2})\s*$/i.exec(header) : null;
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  return { key: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
}

/** The bearer token for a credential (clients and tests use it). */
export function bearerToken(key: string, secret: string): string {
  return Buffer.from(`${key}:${secret}`, 'utf8').toString('base64');
}
