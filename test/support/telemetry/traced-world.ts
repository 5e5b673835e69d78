import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../../src/db/connection.js';
import { IntakeClient } from '../../../src/intake/client.js';
import { createLogger, type Logger } from '../../../src/log/log.js';
import { createFeedPoller } from '../../../src/sync/poll/feed-poller.js';
import { WorkerState } from '../../../src/sync/state/worker-state.js';
import { startTelemetry, type Telemetry } from '../../../src/telemetry/start.js';
import { TELEMETRY_OFF, type OtlpProtocol } from '../../../src/telemetry/settings.js';
import { fastWorkerSettings } from '../fast-settings.js';
import type { Needle } from '../faults/leaks.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';

/** Tracing switched on in this test file's process, exporting to a real receiver (one per file: the SDK is global). */
export async function tracingTo(protocol: OtlpProtocol = 'http/protobuf'): Promise<{ receiver: OtlpReceiver; telemetry: Telemetry }> {
  const receiver = await startOtlpReceiver();
  const telemetry = await startTelemetry({
    ...TELEMETRY_OFF,
    traces: true,
    protocol,
    tracesEndpoint: `${receiver.endpoint}/v1/traces`,
    sampler: 'always_on',
    resourceAttributes: { 'deployment.environment.name': 'test' },
  });
  return { receiver, telemetry };
}

/** A logger whose JSON lines are kept (to find trace ids in them, and to search them for PHI). */
export function capturedLogger(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return { log: createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(line) } }), lines };
}

/** Drains feed `default` once through the production wiring of a feed's poller (createFeedPoller), spans and all. */
export async function drainFeed(db: Db, baseUrl: string, credential: { key: string; secret: string }, log: Logger, pageLimit = 50) {
  const client = new IntakeClient({
    baseUrl,
    apiKey: credential.key,
    apiSecret: credential.secret,
    logger: log,
    maxResponseBytes: 8 * 1024 * 1024,
  });
  const clock = { now: () => Date.now() };
  const poller = createFeedPoller({
    db,
    client,
    settings: fastWorkerSettings({ pageLimit }),
    state: new WorkerState(clock),
    clock,
    sleep: async () => {},
    random: () => 0.5,
    log,
  });
  return poller.drain();
}

/** The needles found in any of `bodies` (labels only: a report never prints a value). */
export function needlesIn(bodies: readonly (Buffer | string)[], needles: readonly Needle[]): string[] {
  const found = new Set<string>();
  for (const body of bodies) {
    const buffer = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    for (const needle of needles) if (buffer.includes(Buffer.from(needle.value, 'utf8'))) found.add(needle.label);
  }
  return [...found];
}

/** status_changes_since(null) as the daemon's own role reads it. */
export function changes(db: Db) {
  return queryRows<{ external_id: string; new_status: string; trace_id: string | null }>(
    db,
    sql`select external_id, new_status, trace_id from intake_sync.status_changes_since(null, 1000)`,
  );
}
