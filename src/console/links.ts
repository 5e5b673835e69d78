import { pathSegment } from './html.js';

// The console's links between pages, in one place so every page links the same way. Identifiers
// only (feed names, finding keys, external_ids), never patient data.

/** The link to a finding's page. */
export function findingHref(feed: string, key: string): string {
  return `/quarantine/${pathSegment(feed)}/${pathSegment(key)}`;
}

/** The link to a prescription's page. */
export function prescriptionHref(feed: string, externalId: string): string {
  return `/prescriptions/${pathSegment(feed)}/${pathSegment(externalId)}`;
}
