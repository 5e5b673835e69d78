import type { Config } from '../../../config/config.js';
import type { Db } from '../../../db/connection.js';
import { resolveFeeds } from '../../../config/feeds-file.js';
import type { IntakeClient } from '../../../intake/client.js';
import { currentSourceBaseUrl } from '../../../sync/version-migration/feed-sources.js';
import { intakeClientFor } from '../../../config/intake-client.js';

/** At most this long for the lag probe: `status` answers from the database even when the operator does not. */
const LAG_TIMEOUT_MS = 5_000;

/**
 * A one-attempt client of the feed's current source (the base URL a version migration recorded, else the
 * configured one) for `status`'s lag probe; undefined when the feed has no operator configured.
 */
export async function statusLagClient(config: Config, feed: string, db: Db): Promise<IntakeClient | undefined> {
  const configured = resolveFeeds(config).find((f) => f.name === feed);
  if (!configured?.baseUrl || !configured.apiKey || !configured.apiSecret) return undefined;
  const baseUrl = (await currentSourceBaseUrl(db, feed)) ?? configured.baseUrl;
  return intakeClientFor(
    config,
    { baseUrl, apiKey: configured.apiKey, apiSecret: configured.apiSecret },
    { timeoutCapMs: LAG_TIMEOUT_MS, retry: { retries: 0 } },
  );
}
