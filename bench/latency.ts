import { setTimeout as sleep } from 'node:timers/promises';
import type postgres from 'postgres';
import type { Db } from '../src/db/connection.js';
import { IntakeClient } from '../src/intake/client.js';
import { samplePrescription } from '../src/sandbox/fixtures.js';
import { SANDBOX_STEP_MS } from '../src/sandbox/rules.js';
import { BenchProcessError } from './bench-process-error.js';
import { DAEMON_NODE_FLAGS } from '../src/daemon/daemon-node-flags.js';
import { spawnNode } from './processes.js';
import { registerFixturePrescriptions } from './register.js';
import { DEFAULT_FEED } from '../src/db/feed-name.js';
import type { SandboxProcess } from './sandbox-process.js';
import { summarize, type Summary } from './stats.js';

/** Feed-visible -> status-in-DB latency of the daemon in steady state. */
export interface LatencyResult {
  poll_interval_ms: number;
  rounds: number;
  events: number;
  latency_ms: Summary;
}

const PER_ROUND = 5;
const OBSERVE_EVERY_MS = 10;
const PREFIX = 'lat';

/**
 * Runs the real daemon (the compiled `intake-sync run` with the daemon's V8 flags, POLL_INTERVAL_MS = pollIntervalMs) against a sandbox whose clock
 * only moves when told. Each round sends PER_ROUND prescriptions through the API and registers them locally,
 * waits a random fraction of the poll interval (so rounds land at every phase of the poll cycle), then
 * advances the sandbox clock one step: their `accepted` events become visible in that instant. The bench
 * then polls the database every OBSERVE_EVERY_MS until each prescription has a status.
 * One clock: both ends are performance.now() in this process, so no cross-process skew. The start is taken
 * before the clock-advance request is sent and the end when the observing query returns, so each sample
 * overstates the true latency by at most one request round trip plus one observation interval (~10 ms).
 */
export async function measureLatency(
  cliEntry: string,
  sandbox: SandboxProcess,
  db: { url: string; database: { db: Db }; sql: postgres.Sql },
  rounds: number,
  pollIntervalMs: number,
): Promise<LatencyResult> {
  const daemon = spawnNode('daemon (latency)', [...DAEMON_NODE_FLAGS, cliEntry, 'run'], {
    ...process.env,
    DATABASE_URL: db.url,
    INTAKE_API_BASE_URL: sandbox.baseUrl,
    INTAKE_API_KEY: sandbox.key,
    INTAKE_API_SECRET: sandbox.secret,
    POLL_INTERVAL_MS: String(pollIntervalMs),
    HEALTH_PORT: '0',
    LOG_LEVEL: 'warn',
  });
  const client = new IntakeClient({ baseUrl: sandbox.baseUrl, apiKey: sandbox.key, apiSecret: sandbox.secret });
  const samples: number[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      const from = round * PER_ROUND;
      const prescriptions = Array.from({ length: PER_ROUND }, (_, k) => samplePrescription(from + k, { prefix: PREFIX }));
      for (const prescription of prescriptions) await client.createPrescription(prescription);
      await registerFixturePrescriptions(db.database.db, PREFIX, from, from + PER_ROUND, DEFAULT_FEED);
      await sleep(Math.random() * pollIntervalMs);
      const visibleAt = performance.now();
      await sandbox.advanceClock(SANDBOX_STEP_MS);
      const ids = prescriptions.map((p) => p.external_id);
      samples.push(...(await observeStatuses(db.sql, ids, pollIntervalMs * 3 + 10_000)).map((t) => t - visibleAt));
    }
  } finally {
    await daemon.stop();
  }
  return { poll_interval_ms: pollIntervalMs, rounds, events: samples.length, latency_ms: summarize(samples) };
}

/** performance.now() at which each of `externalIds` was first seen with a status. */
async function observeStatuses(sql: postgres.Sql, externalIds: readonly string[], timeoutMs: number): Promise<number[]> {
  const seenAt = new Map<string, number>();
  const deadline = performance.now() + timeoutMs;
  while (seenAt.size < externalIds.length) {
    if (performance.now() > deadline) {
      throw new BenchProcessError(`latency: ${externalIds.length - seenAt.size} events not applied within ${timeoutMs} ms`);
    }
    const rows = await sql<Array<{ external_id: string }>>`
      select external_id from intake_sync.prescriptions where external_id in ${sql(externalIds as string[])} and status is not null`;
    const now = performance.now();
    for (const row of rows) if (!seenAt.has(row.external_id)) seenAt.set(row.external_id, now);
    if (seenAt.size < externalIds.length) await sleep(OBSERVE_EVERY_MS);
  }
  return externalIds.map((id) => seenAt.get(id) as number);
}
