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
  // user:password@ in the URL would go out as credentials beside ours, and into logs with the URL
  if (url.username !== '' || url.password !== '') throw new TypeError('the intake API base URL must not carry a user or password');
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return url;
  throw new InsecureBaseUrlError(url.protocol, url.hostname);
}

// the spec: "the version is a segment of the base path"; the operator serves it under /intake_api/
const VERSIONED_PATH = /\/intake_api\/(\d{4}-\d{2}-\d{2})\/*$/;

/**
 * Why a configured operator base URL cannot be used, or undefined when it can: an absolute http(s)
 * URL, https unless the host is loopback, no user or password in it (credentials are the key and
 * secret), no query or fragment, and a path ending in `/intake_api/<a version this build reads>`
 * (without it every request lands on the wrong resource: a 404 on /events at best). The message
 * never quotes the URL (it may carry credentials). Pure; `supported` is SUPPORTED_API_VERSIONS.
 */
export function baseUrlProblem(baseUrl: string, supported: readonly string[]): string | undefined {
  if (!URL.canParse(baseUrl)) return 'must be an absolute http(s) URL';
  const url = new URL(baseUrl);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an absolute http(s) URL';
  if (url.username !== '' || url.password !== '') return 'must not carry a user or password (the credentials are the API key and secret)';
  // the bearer token must never cross a network in clear text
  if (url.protocol !== 'https:' && !isLoopbackHost(url.hostname)) return `must use https:// (http:// is allowed only for a loopback host)`;
  if (url.search !== '' || url.hash !== '') return 'must not carry a query or fragment';
  const version = VERSIONED_PATH.exec(url.pathname)?.[1];
  if (version === undefined) return `must end in /intake_api/<version> (this build reads ${supported.join(', ')})`;
  if (!supported.includes(version))
    return `names API version ${version}, which this build does not read (it reads ${supported.join(', ')})`;
  return undefined;
}
