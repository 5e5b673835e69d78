import { InsecureBaseUrlError } from './errors/insecure-base-url-error.js';

/** True for hosts that never leave this machine: localhost, 127.0.0.0/8, ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host === '::1') return true;
  const octets = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  return octets !== null && octets[1] === '127' && octets.slice(2).every((o) => Number(o) <= 255);
}

/**
 * The one spelling of a base URL: without trailing slashes. Configured URLs are read through it, so the
 * URLs recorded and compared as text (feed_sources.base_url, outbox.sent_through) are one spelling
 * whether the operator wrote `.../2025-06-01` or `.../2025-06-01/` (the HTTP client accepts both).
 */
export const canonicalBaseUrl = (baseUrl: string): string => baseUrl.replace(/\/+$/, '');

/**
 * Parses the operator base URL and refuses any that would send the bearer token
 * in clear over a network: https is required except on loopback.
 */
export function parseSecureBaseUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch (error) {
    // the URL itself is not echoed: it may carry credentials
    throw new TypeError('the intake API base URL is not an absolute URL', { cause: error });
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return url;
  throw new InsecureBaseUrlError(url.protocol, url.hostname);
}
