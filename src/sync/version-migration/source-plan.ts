import { canonicalBaseUrl } from '../../intake/base-url.js';
import { SourceMismatchError } from './errors/source-mismatch-error.js';

export const SOURCE_STATES = ['current', 'draining', 'retired'] as const;
export type SourceState = (typeof SOURCE_STATES)[number];

/** A feed_sources row as the plan needs it. */
export interface RecordedSource {
  baseUrl: string;
  apiVersion: string;
  state: SourceState;
}

/** One source a worker reads this term. */
export interface PlannedSource {
  baseUrl: string;
  /** the version its events should carry (the base URL's segment); undefined for the configured URL of a feed without sources */
  apiVersion: string | undefined;
  /** false: its position is the feed's checkpoint; true: its own row in feed_sources */
  draining: boolean;
}

/** Base URLs compare without trailing slashes: `.../2025-06-01/` and `.../2025-06-01` are one source. */
export const sameBaseUrl = (a: string, b: string): boolean => canonicalBaseUrl(a) === canonicalBaseUrl(b);

/**
 * Which sources a feed's worker reads. Pure. Without recorded sources: the configured base URL on
 * the feed's checkpoint, as before migrations existed. With them: the current one, then the draining
 * one(s) (retired ones are never read again); the configured base URL must be one of the recorded
 * ones (any state), or SourceMismatchError.
 */
export function planSources(feed: string, configuredBaseUrl: string, recorded: readonly RecordedSource[]): PlannedSource[] {
  if (recorded.length === 0) return [{ baseUrl: configuredBaseUrl, apiVersion: undefined, draining: false }];
  if (!recorded.some((source) => sameBaseUrl(source.baseUrl, configuredBaseUrl))) {
    throw new SourceMismatchError(
      feed,
      configuredBaseUrl,
      recorded.map((source) => `${source.baseUrl} (${source.state})`),
    );
  }
  const order = (state: SourceState) => SOURCE_STATES.indexOf(state);
  return [...recorded]
    .filter((source) => source.state !== 'retired')
    .sort((a, b) => order(a.state) - order(b.state) || a.baseUrl.localeCompare(b.baseUrl))
    .map((source) => ({ baseUrl: source.baseUrl, apiVersion: source.apiVersion, draining: source.state === 'draining' }));
}

/** A comparable fingerprint of the recorded sources: a worker whose term began on another one restarts its pollers. */
export function sourcesSignature(recorded: readonly RecordedSource[]): string {
  return recorded
    .map((source) => `${source.baseUrl}=${source.state}`)
    .sort()
    .join(' ');
}
