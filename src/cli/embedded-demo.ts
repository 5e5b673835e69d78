import type { Config } from '../config.js';
import type { Database } from '../db/connection.js';
import { IntakeClient, type IntakeClientOptions } from '../intake/client.js';
import type { Logger } from '../log.js';
import { scaledClock } from '../sandbox/clock.js';
import { samplePrescription } from '../sandbox/fixtures.js';
import { startSandbox } from '../sandbox/server.js';
import { listLocalPrescriptions, recordSentPrescription } from '../sync/local-prescriptions.js';

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
 * seeds it through the API when the local store is empty. Every line of it says SANDBOX.
 */
export async function startEmbeddedSandbox(
  config: Config,
  database: Database,
  log: Logger,
  clientOptions: Pick<IntakeClientOptions, 'onRetry' | 'signal'> = {},
): Promise<EmbeddedSandbox> {
  const sandbox = await startSandbox({ host: '127.0.0.1', port: 0, clock: scaledClock(config.SANDBOX_TIME_SCALE) });
  const credential = sandbox.credentials[0];
  if (!credential) {
    await sandbox.close();
    throw new Error('the built-in sandbox started without a credential');
  }
  log.warn(
    { baseUrl: sandbox.baseUrl, timeScale: config.SANDBOX_TIME_SCALE },
    'SANDBOX: INTAKE_API_BASE_URL is not set, so this worker talks to the built-in simulated operator, NOT a pharmacy. Nothing here is real.',
  );
  const client = new IntakeClient({
    baseUrl: sandbox.baseUrl,
    apiKey: credential.key,
    apiSecret: credential.secret,
    timeoutMs: config.HTTP_TIMEOUT_MS,
    logger: log,
    ...clientOptions,
  });
  try {
    await seedWhenEmpty(client, database, log);
  } catch (error) {
    await sandbox.close();
    throw error;
  }
  return { client, baseUrl: sandbox.baseUrl, close: () => sandbox.close() };
}

async function seedWhenEmpty(client: IntakeClient, database: Database, log: Logger): Promise<void> {
  const existing = await listLocalPrescriptions(database.db);
  if (existing.length > 0) {
    // the sandbox forgets everything on exit; these rows belong to an earlier run's sandbox
    log.warn({ localPrescriptions: existing.length }, 'SANDBOX: local store is not empty, not seeding (delete DATA_DIR for a fresh demo)');
    return;
  }
  for (const request of DEMO_SEED) {
    const response = await client.createPrescription(request);
    await recordSentPrescription(database.db, request, response);
  }
  log.warn({ externalIds: DEMO_SEED.map((r) => r.external_id) }, 'SANDBOX: seeded demo prescriptions (one ends rejected)');
}
