import { API_VERSION } from './fields.js';

/**
 * The API versions this build reads. Same resource and event shapes in each: a new version joins
 * the list only once its shapes are known to match (or the code learns the difference). An event
 * carrying any other api_version is stored and quarantined (`unsupported_version`), never guessed at.
 */
export const SUPPORTED_API_VERSIONS: readonly string[] = Object.freeze([API_VERSION, '2025-06-01']);

/** Whether events published under `apiVersion` can be applied by this build. */
export function isSupportedApiVersion(apiVersion: string): boolean {
  return SUPPORTED_API_VERSIONS.includes(apiVersion);
}

const VERSION_SEGMENT = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The API version a base URL names: its last path segment, when that is a YYYY-MM-DD date (the
 * spec: "the version is a segment of the base path"); undefined when it names none.
 */
export function apiVersionOfBaseUrl(baseUrl: string): string | undefined {
  let pathname: string;
  try {
    pathname = new URL(baseUrl).pathname;
  } catch {
    return undefined;
  }
  const last = pathname.replace(/\/+$/, '').split('/').pop() ?? '';
  return VERSION_SEGMENT.test(last) ? last : undefined;
}
