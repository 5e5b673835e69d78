import { API_VERSION } from '../intake/index.js';
import { InvalidVersionError } from './invalid-version-error.js';

/**
 * Whether one version's GET /events lists only the events of its own subscriptions (`separate`:
 * each version has its own feed, ids and iterator space) or every event of the credential
 * (`shared`: one feed, the same ids at the same positions under every version). The spec does not
 * say which the operator does, so the simulator plays both.
 */
export const VERSION_LISTINGS = ['separate', 'shared'] as const;
export type VersionListing = (typeof VERSION_LISTINGS)[number];

const VERSION_FORMAT = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The versions the simulator serves, validated (YYYY-MM-DD, a real calendar date, no repeats) and
 * in the order given; the first is the default (the one `baseUrl` names). Throws InvalidVersionError.
 */
export function parseServedVersions(versions: readonly string[] = [API_VERSION]): string[] {
  if (versions.length === 0) throw new InvalidVersionError('(none)', 'at least one version must be served');
  const seen = new Set<string>();
  for (const version of versions) {
    if (!VERSION_FORMAT.test(version)) throw new InvalidVersionError(version, 'a version is a date written YYYY-MM-DD');
    // 2025-02-30 has the format but is no day: Date rolls it over, so the round trip tells
    if (new Date(`${version}T00:00:00Z`).toISOString().slice(0, 10) !== version)
      throw new InvalidVersionError(version, 'not a calendar date');
    if (seen.has(version)) throw new InvalidVersionError(version, 'given twice');
    seen.add(version);
  }
  return [...versions];
}

/** The base path of one version: `/intake_api/<version>` (the spec: the version is a segment of it). */
export const versionBasePath = (version: string): string => `/intake_api/${version}`;
