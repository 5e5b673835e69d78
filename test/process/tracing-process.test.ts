import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/sandbox/clock.js';
import { SANDBOX_STEP_MS } from '../../src/sandbox/rules.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { canaryPatient } from '../support/faults/canary-fixtures.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import { startOtlpReceiver, type OtlpReceiver } from '../support/telemetry/otlp-receiver.js';
import { needlesIn } from '../support/telemetry/traced-world.js';
import { spawnCli, stopProcesses, type WorkerProcess } from '../support/process/worker-process.js';
import { waitFor } from '../support/wait-for.js';

// Issue 38 §6, as deployed: `intake-sync run` in its own process with the standard OTEL_* variables
// pointing at a real OTLP/HTTP receiver, the app calling send_prescription with its traceparent, the
// sandbox operator accepting it; the daemon's exported spans form the linked tree, its log lines carry
// the ids, `changes follow --json` hands the page's trace id to a follower, and nothing holds the PHI.

const onPostgres = await postgresReachable();
const APP_TRACE = 'c0ffee00c0ffee00c0ffee00c0ffee00';
const APP_SPAN = 'feedfacefeedface';
// child processes: a daemon start (tsx) and its first polls on a loaded 2-core machine
const PROCESS_BUDGET_MS = 60_000;

let tdb: TestDatabase;
let sandbox: Sandbox;
let receiver: OtlpReceiver;
let app: postgres.Sql;
const children: WorkerProcess[] = [];

beforeAll(async () => {
  if (!onPostgres) return;
  receiver = await startOtlpReceiver();
  tdb = await createTestDatabase('otel_process');
  sandbox = await startSandbox({ clock: new ManualClock() });
  app = postgres(tdb.url ?? '', { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  if (!onPostgres) return;
  await stopProcesses(children);
  await app.end({ timeout: 5 });
  await sandbox.close();
  await tdb.drop();
  await receiver.close();
});

describe.skipIf(!onPostgres)(`intake-sync run with OTEL_* set (${NEEDS_POSTGRES})`, () => {
  it(
    'send_prescription → delivery → event → change: linked spans from the daemon, trace ids in its logs and in changes follow',
    async () => {
      const patient = canaryPatient(7);
      const credential = sandbox.credentials[0] ?? { key: '', secret: '' };
      await app.begin(async (tx) => {
        await tx.unsafe('select pg_catalog.set_config($1, $2, true)', ['intake_sync.traceparent', `00-${APP_TRACE}-${APP_SPAN}-01`]);
        await tx.unsafe('select intake_sync.send_prescription($1::text::jsonb)', [JSON.stringify(patient.prescription)]);
      });
      const env = {
        DATABASE_URL: tdb.url ?? '',
        INTAKE_API_BASE_URL: sandbox.baseUrl,
        INTAKE_API_KEY: credential.key,
        INTAKE_API_SECRET: credential.secret,
        HEALTH_HOST: '127.0.0.1',
        HEALTH_PORT: '0',
        POLL_INTERVAL_MS: '50',
        LOG_LEVEL: 'debug',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_SERVICE_NAME: 'intake-sync-process-test',
        OTEL_TRACES_SAMPLER: 'always_on',
      };
      const daemon = spawnCli(['run'], env);
      children.push(daemon);
      const delivered = async () => (await app.unsafe(`select 1 from intake_sync.outbox where state = 'delivered'`)).length === 1;
      await waitFor(delivered, { timeoutMs: PROCESS_BUDGET_MS, what: 'the outbox delivery' }).catch((error: unknown) => {
        throw new Error(`${String(error)}; the daemon said: ${JSON.stringify(daemon.logs().slice(-5))}`);
      });
      (sandbox.clock as ManualClock).advance(SANDBOX_STEP_MS);
      await waitFor(async () => (await app.unsafe('select 1 from intake_sync.status_changes')).length === 1, {
        timeoutMs: PROCESS_BUDGET_MS,
        what: 'the accepted status',
      });
      // SIGTERM: the daemon stops, and flushes its spans on the way out
      daemon.child.kill('SIGTERM');
      expect(await daemon.exited).toBe(0);

      const follower = spawnCli(['changes', 'follow', '--json'], { DATABASE_URL: tdb.url ?? '' });
      children.push(follower);
      await waitFor(() => follower.stdout().includes('\n'), { timeoutMs: PROCESS_BUDGET_MS, what: 'the first change line' });
      follower.child.kill('SIGTERM');
      await follower.exited;
      const change = JSON.parse(follower.stdout().split('\n')[0] ?? '{}') as Record<string, unknown>;

      const spans = receiver.spans();
      const delivery = spans.find((s) => s.name === 'process outbox' && s.attributes['intake_sync.outbox.outcome'] === 'delivered');
      expect(delivery?.links).toEqual([{ traceId: APP_TRACE, spanId: APP_SPAN, attributes: { 'intake_sync.link.kind': 'app' } }]);
      expect(delivery?.resource).toMatchObject({ 'service.name': 'intake-sync-process-test' });
      expect(spans.some((s) => s.name === 'POST /prescriptions' && s.parentSpanId === delivery?.spanId)).toBe(true);
      const page = spans.find((s) => s.name === 'intake_sync.page apply' && s.attributes['intake_sync.page.status_changes'] === 1);
      expect(page?.links.map((l) => l.spanId)).toEqual([delivery?.spanId]);
      expect(spans.find((s) => s.spanId === page?.parentSpanId)?.name).toBe('intake_sync.poll');
      expect(change).toMatchObject({ external_id: patient.prescription.external_id, new_status: 'accepted', trace_id: page?.traceId });
      const deliveredLine = daemon.logs().find((l) => l.msg === 'outbox row delivered');
      expect(deliveredLine).toMatchObject({ trace_id: delivery?.traceId, span_id: delivery?.spanId });
      const needles = [...patient.needles, { label: 'api secret', value: credential.secret }];
      expect(needlesIn(receiver.bodies(), needles)).toEqual([]);
      expect(
        needlesIn(
          [
            daemon
              .logs()
              .map((l) => JSON.stringify(l))
              .join('\n'),
          ],
          needles,
        ),
      ).toEqual([]);
    },
    4 * PROCESS_BUDGET_MS,
  );
});
