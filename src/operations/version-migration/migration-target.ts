import { canonicalBaseUrl } from '../../intake/base-url.js';
import { apiVersionOfBaseUrl, isSupportedApiVersion, SUPPORTED_API_VERSIONS } from '../../intake/versions.js';
import { MigrationArgumentError } from './errors/migration-argument-error.js';
import { sameBaseUrl, type RecordedSource } from '../../sync/version-migration/source-plan.js';

/** What `subscriptions migrate --to-base-url` resolved to. */
export type MigrationTarget =
  /** record the sources (from: draining, to: current), then move every prescription */
  | { kind: 'start'; from: { baseUrl: string; apiVersion: string }; to: { baseUrl: string; apiVersion: string } }
  /** the sources are recorded already (a rerun): go on with the prescriptions not done */
  | { kind: 'resume'; from: { baseUrl: string; apiVersion: string }; to: { baseUrl: string; apiVersion: string } };

/**
 * Decides a migration from the feed's configured base URL and recorded sources. Pure; throws
 * MigrationArgumentError naming the problem: the URL names no supported version, the version is
 * the current one, or another migration still drains. `toBaseUrl` is already checked by base-url.ts.
 */
export function resolveMigrationTarget(
  feed: string,
  configuredBaseUrl: string,
  recorded: readonly RecordedSource[],
  toBaseUrl: string,
): MigrationTarget {
  const toVersion = apiVersionOfBaseUrl(toBaseUrl);
  if (toVersion === undefined)
    throw new MigrationArgumentError(`--to-base-url ${toBaseUrl} names no API version (its last path segment must be YYYY-MM-DD)`);
  if (!isSupportedApiVersion(toVersion)) {
    throw new MigrationArgumentError(
      `--to-base-url: API version ${toVersion} is not one this build reads (${SUPPORTED_API_VERSIONS.join(', ')})`,
    );
  }
  const to = { baseUrl: canonicalBaseUrl(toBaseUrl), apiVersion: toVersion };
  const current = recorded.find((source) => source.state === 'current');
  const draining = recorded.find((source) => source.state === 'draining');
  if (current && sameBaseUrl(current.baseUrl, toBaseUrl)) {
    // the same command again: resume while the old source drains (or its prescriptions remain)
    if (draining) return { kind: 'resume', from: { baseUrl: draining.baseUrl, apiVersion: draining.apiVersion }, to };
    throw new MigrationArgumentError(`feed ${feed}: ${toBaseUrl} is already the feed's current source and nothing drains`);
  }
  if (draining) {
    throw new MigrationArgumentError(
      `feed ${feed}: a migration from ${draining.baseUrl} to ${current?.baseUrl ?? '?'} is still under way; finish it (rerun it) before starting another`,
    );
  }
  const fromUrl = current?.baseUrl ?? configuredBaseUrl;
  const fromVersion = current?.apiVersion ?? apiVersionOfBaseUrl(fromUrl);
  if (fromVersion === undefined) throw new MigrationArgumentError(`feed ${feed}: the current base URL ${fromUrl} names no API version`);
  if (fromVersion === toVersion)
    throw new MigrationArgumentError(`--to-base-url: the feed already reads API version ${toVersion} (${fromUrl})`);
  return { kind: 'start', from: { baseUrl: canonicalBaseUrl(fromUrl), apiVersion: fromVersion }, to };
}
