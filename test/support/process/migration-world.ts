import { rmSync } from 'node:fs';
import pino from 'pino';
import type { SQL } from 'drizzle-orm';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../../src/db/connection.js';
import { IntakeClient } from '../../../src/intake/client.js';
import type { PrescriptionRequest } from '../../../src/intake/prescription.js';
import { ManualClock } from '../../../src/sandbox/clock.js';
import { startSandbox, type Sandbox } from '../../../src/sandbox/server.js';
import type { VersionListing } from '../../../src/sandbox/versions.js';
import { composeWorker, type WorkerSettings } from '../../../src/sync/compose-worker.js';
import { listFeedSources } from '../../../src/sync/version-migration/feed-sources.js';
import { recordSentPrescription } from '../../../src/sync/matching/sent-prescriptions.js';
import type { SyncWorker } from '../../../src/sync/leadership/leader-loop.js';
import { WorkerState } from '../../../src/sync/state/worker-state.js';
import { createTestDatabase, type TestDatabase } from '../db.js';
import { spawnCli, stopProcesses, type WorkerProcess } from './worker-process.js';
import { fastWorkerSettings } from '../fast-settings.js';

// What the API version migration tests share: a simulator serving two versions, a test database, a
// worker reading the feed's sources, CLI processes, and the operator's truth read from the simulator.

export const MINUTE = 60_000;
export const V1 = '2024-12-10';
export const V2 = '2025-06-01';
export const FEED = 'default';

const silent = pino({ level: 'silent' });

/** Fast polls and a long lease: the tests wait on observable state, never on these timings. */
export const migrationWorkerSettings: WorkerSettings = fastWorkerSettings({ feed: FEED });

export interface MigrationWorld {
  clock: ManualClock;
  sandbox: Sandbox;
  test: TestDatabase;
  /** the CLI's environment: the OLD version configured (the operator has not edited the config) */
  env: Record<string, string>;
  client(version: string): IntakeClient;
  /** the client of a recorded source's base URL */
  clientOfUrl(baseUrl: string): IntakeClient;
  /** CLI processes started by the test, stopped by pid in stopMigrationWorld */
  children: WorkerProcess[];
  worker?: SyncWorker;
  running?: Promise<void>;
  /** a scratch folder removed in stopMigrationWorld */
  dir?: string;
}

export async function startMigrationWorld(label: string, listing: VersionListing = 'separate'): Promise<MigrationWorld> {
  const clock = new ManualClock(Date.UTC(2025, 0, 1));
  const sandbox = await startSandbox({ clock, versions: [V1, V2], versionListing: listing });
  const [credential] = sandbox.credentials;
  const clients = new Map<string, IntakeClient>();
  const client = (version: string) => {
    if (!clients.has(version))
      clients.set(
        version,
        new IntakeClient({ baseUrl: sandbox.baseUrlFor(version), apiKey: credential!.key, apiSecret: credential!.secret }),
      );
    return clients.get(version)!;
  };
  const test = await createTestDatabase(label);
  const env = {
    DATABASE_URL: test.url ?? '',
    INTAKE_API_BASE_URL: sandbox.baseUrlFor(V1),
    INTAKE_API_KEY: credential!.key,
    INTAKE_API_SECRET: credential!.secret,
    // a held request must be killed or released, never time out first
    HTTP_TIMEOUT_MS: '120000',
  };
  const clientOfUrl = (baseUrl: string) => (baseUrl === sandbox.baseUrlFor(V2) ? client(V2) : client(V1));
  return { clock, sandbox, test, env, client, clientOfUrl, children: [] };
}

/** Stops what the test started: its CLI processes by pid, the worker, the simulator, the database, the folder. */
export async function stopMigrationWorld(w: MigrationWorld | undefined): Promise<void> {
  await stopProcesses(w?.children ?? []);
  await w?.worker?.stop();
  await w?.running;
  await w?.sandbox.close();
  await w?.test.drop();
  if (w?.dir) rmSync(w.dir, { recursive: true, force: true });
}

/** The worker as `run` wires it, the old URL configured; `outbox`: with the outbox delivering through the sources. */
export function runMigrationWorker(w: MigrationWorld, options: { outbox?: boolean } = {}): void {
  w.worker = composeWorker({
    database: w.test.database,
    databaseUrl: w.test.url,
    client: w.client(V1),
    ...(options.outbox ? { outboxClient: w.client(V1), outboxClientFor: w.clientOfUrl } : {}),
    settings: migrationWorkerSettings,
    state: new WorkerState({ now: () => Date.now() }),
    log: silent,
    sources: { configuredBaseUrl: w.sandbox.baseUrlFor(V1), clientFor: w.clientOfUrl },
  });
  w.running = w.worker.run();
}

/** A CLI process, stopped by stopMigrationWorld (by pid) if a failed test leaves it running. */
export function cliProcess(w: MigrationWorld, args: string[], env: Record<string, string> = w.env): WorkerProcess {
  const child = spawnCli(args, env);
  w.children.push(child);
  return child;
}

export const migrate = (w: MigrationWorld, extra: string[] = []) =>
  cliProcess(w, ['subscriptions', 'migrate', '--to-base-url', w.sandbox.baseUrlFor(V2), ...extra]);

export async function finished(child: WorkerProcess) {
  const code = await child.exited;
  return {
    code,
    stdout: child.stdout(),
    stderr: child
      .logs()
      .map((l) => (typeof l.raw === 'string' ? l.raw : JSON.stringify(l)))
      .join('\n'),
  };
}

export const rows = <T extends Record<string, unknown>>(w: MigrationWorld, query: SQL) => queryRows<T>(w.test.database.db, query);

/** `external_id:state` of every progress row. */
export const progress = async (w: MigrationWorld) =>
  (
    await rows<{ external_id: string; state: string }>(
      w,
      sql`select external_id, state from intake_sync.subscription_migrations order by external_id`,
    )
  ).map((r) => `${r.external_id}:${r.state}`);

/** `version:state` of the feed's recorded sources. */
export const sourceStates = async (w: MigrationWorld) =>
  (await listFeedSources(w.test.database.db, FEED)).map((s) => `${s.apiVersion}:${s.state}`);

export function tenantOf(w: MigrationWorld) {
  const [credential] = w.sandbox.credentials;
  return w.sandbox.store.authenticate(credential!.key, credential!.secret)!;
}

/** The operator's truth: each sent prescription's subscriptions as `version:active|cancelled`. */
export function operatorSubscriptions(w: MigrationWorld): Record<string, string[]> {
  const tenant = tenantOf(w);
  const result: Record<string, string[]> = {};
  for (const record of tenant.prescriptions.values()) {
    result[record.externalId] = tenant
      .subscriptionsWithKey(record.identityKey)
      .map((s) => `${s.apiVersion}:${s.cancelledAt === null ? 'active' : 'cancelled'}`)
      .sort();
  }
  return result;
}

/** Sends through V1 and records it locally; `known`: with its automatic subscription's id (else unknown until an event). */
export async function sendThroughV1(w: MigrationWorld, request: PrescriptionRequest, known: boolean): Promise<void> {
  const response = await w.client(V1).createPrescription(request);
  const tenant = tenantOf(w);
  const record = [...tenant.prescriptions.values()].find((p) => p.externalId === request.external_id)!;
  const subscriptionId = known ? tenant.subscriptionsWithKey(record.identityKey)[0]!.id : undefined;
  await recordSentPrescription(w.test.database.db, request, response, subscriptionId);
}
