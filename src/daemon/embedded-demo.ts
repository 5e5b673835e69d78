import type { Config } from '../config/config.js';
import type { Database } from '../db/connection.js';
import type { IntakeClient, IntakeClientOptions } from '../intake/client.js';
import type { Logger } from '../log/log.js';
import { describeTimeScale, scaledClock } from '../sandbox/clock.js';
import { samplePrescription } from '../sandbox/fixtures.js';
import { startSandbox } from '../sandbox/server.js';
import { loadCheckpoint, resetCheckpoint } from '../sync/poll/checkpoint.js';
import { recordSentPrescription } from '../sync/matching/sent-prescriptions.js';
import { registerFeeds } from '../db/feed-registry.js';
import { feedOriginRefusal } from './demo-gate.js';
import { DaemonError } from './errors.js';
import { intakeClientFor } from '../config/intake-client.js';

/** The demo's seed: two take the happy path to `delivered`, one the rejection path. */
const DEMO_SEED = [
  samplePrescription(1, { prefix: 'demo' }),
  samplePrescription(2, { prefix: 'demo' }),
  samplePrescription(3, { prefix: 'demo', rejected: true }),
];

export interface EmbeddedSandbox {
  client: IntakeClient;
  baseUrl: string;
  close(): Promise<void>;
}

/**
 * No INTAKE_API_BASE_URL: runs the built-in sandbox in this process on an
 * ephemeral loopback port, its clock sped up SANDBOX_TIME_SCALE times, and
 * seeds it through the API. Every line of it says SANDBOX.
 */
export async function startEmbeddedSandbox(
  config: Config,
  database: Database,
  log: Logger,
  clientOptions: Pick<IntakeClientOptions, 'onRetry' | 'signal'> = {},
): Promise<EmbeddedSandbox> {
  // whoever calls this: the simulator resets, seeds and delivers only in a database that is the demo's
  const conflict = await registerFeeds(database.db, [config.FEED_NAME], 'simulator');
  if (conflict) throw feedOriginRefusal(conflict, 'demo');
  const sandbox = await startSandbox({ host: '127.0.0.1', port: 0, clock: scaledClock(config.SANDBOX_TIME_SCALE) });
  const credential = sandbox.credentials[0];
  if (!credential) {
    await sandbox.close();
    throw new DaemonError('the built-in sandbox started without a credential', { exitCode: 1 });
  }
  log.warn(
    { baseUrl: sandbox.baseUrl, timeScale: config.SANDBOX_TIME_SCALE },
    `SANDBOX: INTAKE_API_BASE_URL is not set, so this worker talks to the built-in simulated operator, NOT a pharmacy. Nothing here is real; ${describeTimeScale(config.SANDBOX_TIME_SCALE)}.`,
  );
  const client = intakeClientFor(
    config,
    { baseUrl: sandbox.baseUrl, apiKey: credential.key, apiSecret: credential.secret },
    { logger: log, ...clientOptions },
  );
  try {
    await rewindToNewFeed(config.FEED_NAME, database, log);
    await seed(client, database, log);
  } catch (error) {
    await sandbox.close();
    throw error;
  }
  return { client, baseUrl: sandbox.baseUrl, close: () => sandbox.close() };
}

/**
 * The sandbox keeps nothing across runs, so an iterator stored by an earlier run
 * points into a feed that no longer exists. Its feed is deterministic (same
 * seed, same event ids), so replaying from the beginning dedupes against history.
 */
async function rewindToNewFeed(feed: string, database: Database, log: Logger): Promise<void> {
  const checkpoint = await loadCheckpoint(database.db, feed);
  if (checkpoint.iterator === null) return;
  await resetCheckpoint(database.db, feed, { to: null, by: 'embedded-sandbox' });
  log.warn({ feed }, 'SANDBOX: a fresh simulator started, so the feed checkpoint was reset to its beginning');
}

// registration is an upsert by external_id, so a rerun on the same DATA_DIR keeps earlier statuses
async function seed(client: IntakeClient, database: Database, log: Logger): Promise<void> {
  for (const request of DEMO_SEED) {
    const response = await client.createPrescription(request);
    await recordSentPrescription(database.db, request, response);
  }
  log.warn({ externalIds: DEMO_SEED.map((r) => r.external_id) }, 'SANDBOX: seeded demo prescriptions (one ends rejected)');
}
