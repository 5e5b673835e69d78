import { describe, expect, test } from 'vitest';
import { IntakeClient } from '../../src/intake/client.js';
import { sampleIdentity, samplePrescription } from '../../src/sandbox/fixtures.js';
import { postgresReachable } from '../support/db.js';
import { expectNoLeaks, identityNeedles } from '../support/faults/leaks.js';
import { runSeed, seededRandom } from '../support/faults/rng.js';
import { TRANSPORT_CALM } from '../support/faults/sandbox-admin.js';
import { openScenario } from '../support/faults/scenario-kit.js';
import { recordSkip, runScenario } from '../support/faults/trials.js';
import { waitFor } from '../support/wait-for.js';
import { startWorker, stopWorker } from '../support/faults/worker.js';

const SCENARIO = '11. outbox: 500 rows, 20% upstream faults (drops after processing too), 10 kill -9 mid-delivery';
const PREFIX = 'ob';
// 500 rows: 420 good sends, 20 sends whose external_id another prescription already holds at the
// operator (refused without ambiguity), 45 cancels of good sends, 5 cancels behind the refused
// sends, 10 cancels of ids the operator never had.
const GOOD_SENDS = 420;
const TAKEN_SENDS = 20;
const GOOD_CANCELS = 45;
const CANCELS_BEHIND_TAKEN = 5;
const UNKNOWN_CANCELS = 10;
const KILLS = 10;
// per request, so a kill lands while requests are in flight
const UPSTREAM_LATENCY_MS = 15;
const KILL_WITHIN_MS = 250;

const available = await postgresReachable();
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const good = (i: number) => `${PREFIX}-${i}`;
const taken = (i: number) => `${PREFIX}-${GOOD_SENDS + i}`;

describe.skipIf(!available)(SCENARIO, () => {
  test('every row created exactly once at the operator, none lost; every row delivered or failed with its reason', async () => {
    await runScenario(SCENARIO, async (trial) => {
      const seed = runSeed();
      const random = seededRandom(seed);
      console.info(`[${SCENARIO}] seed ${seed} (replay with FAULTS_SEED=${seed})`);
      const kit = await openScenario('outbox');
      try {
        const db = await kit.database('main');
        kit.addNeedles(identityNeedles(Array.from({ length: GOOD_SENDS + TAKEN_SENDS }, (_, i) => sampleIdentity(i))));

        // another prescription holds each taken id before the test (different written_date: not ours)
        const operator = new IntakeClient({ baseUrl: kit.sandbox.baseUrl, apiKey: kit.sandbox.key, apiSecret: kit.sandbox.secret });
        for (let i = 0; i < TAKEN_SENDS; i++) {
          await operator.createPrescription({ ...samplePrescription(GOOD_SENDS + i, { prefix: PREFIX }), written_date: '2019-06-01' });
        }

        // the vendor's application queues the rows in its own transactions, 50 a time
        const statements: Array<(tx: typeof db.sql) => Promise<unknown>> = [];
        for (let i = 0; i < GOOD_SENDS + TAKEN_SENDS; i++) {
          const body = samplePrescription(i, { prefix: PREFIX });
          statements.push((tx) => tx`select intake_sync.send_prescription(${tx.json(JSON.parse(JSON.stringify(body)))}::jsonb)`);
        }
        const cancelIds = [
          ...Array.from({ length: GOOD_CANCELS }, (_, k) => good(k * 9)),
          ...Array.from({ length: CANCELS_BEHIND_TAKEN }, (_, k) => taken(k)),
          ...Array.from({ length: UNKNOWN_CANCELS }, (_, k) => `${PREFIX}-never-${k}`),
        ];
        for (const id of cancelIds) statements.push((tx) => tx`select intake_sync.cancel_prescription(${id})`);
        for (let start = 0; start < statements.length; start += 50) {
          await db.sql.begin(async (tx) => {
            for (const statement of statements.slice(start, start + 50)) await statement(tx as unknown as typeof db.sql);
          });
        }
        const [queued] = await db.sql<{ n: number }[]>`select count(*)::int as n from intake_sync.outbox_status`;
        expect(queued?.n).toBe(500);

        // ~20% of requests fault: resets before and after the operator processed them, 5xx, 429, hangs
        await kit.sandbox.admin.setFaults({
          ...TRANSPORT_CALM,
          latencyMs: UPSTREAM_LATENCY_MS,
          latencyJitterMs: UPSTREAM_LATENCY_MS,
          dropRate: 0.04,
          dropAfterProcessingRate: 0.08,
          errorRate: 0.05,
          rateLimitRate: 0.03,
          hangRate: 0.01,
          retryAfterSeconds: 0,
          seed,
        });
        const setup = kit.setup(db, { HTTP_TIMEOUT_MS: '1000', POLL_INTERVAL_MS: '100', POLL_BACKOFF_MAX_MS: '1000' });
        const progress = async () => {
          const [row] = await db.sql<{ attempts: number; open: number }[]>`
            select coalesce(sum(attempts), 0)::int as attempts, count(*) filter (where state = 'pending')::int as open from intake_sync.outbox`;
          return row ?? { attempts: 0, open: 0 };
        };

        let kills = 0;
        let inDoubtAtKill = 0;
        while (kills < KILLS) {
          const before = (await progress()).attempts;
          const worker = await startWorker(setup);
          // this life has made some progress (a random share, so the kills spread over the whole drain):
          // strike at a random instant within the next KILL_WITHIN_MS, with requests in flight
          const target = before + 10 + Math.floor(random() * 40);
          await waitFor(async () => (await progress()).attempts >= target || !worker.child.isRunning(), {
            what: 'this life to attempt deliveries',
            timeoutMs: 60_000,
            intervalMs: 10,
            probeErrors: 'retry',
          });
          await pause(random() * KILL_WITHIN_MS);
          if (!worker.child.isRunning())
            throw new Error(`worker exited on its own after ${kills} kills; stderr tail: ${worker.child.stderr().slice(-800)}`);
          worker.child.signal('SIGKILL');
          await worker.child.exited;
          kills++;
          const [doubt] = await db.sql<
            { n: number }[]
          >`select count(*)::int as n from intake_sync.outbox where state = 'pending' and in_doubt`;
          inDoubtAtKill += doubt?.n ?? 0;
        }
        const openAfterKills = (await progress()).open;
        expect(openAfterKills, 'the kills must land before the outbox is drained').toBeGreaterThan(0);

        const last = await startWorker(setup);
        await waitFor(async () => (await progress()).open === 0, {
          what: 'every outbox row to be delivered or failed',
          timeoutMs: 90_000,
          intervalMs: 100,
          probeErrors: 'retry',
        });
        await stopWorker(last);

        // the operator's side: exactly one creation per sent external_id, never a blind resend
        const ledger = await kit.sandbox.admin.prescriptionRequests(`${PREFIX}-`);
        const sentIds = [
          ...Array.from({ length: GOOD_SENDS }, (_, i) => good(i)),
          ...Array.from({ length: TAKEN_SENDS }, (_, i) => taken(i)),
        ];
        const creations = sentIds.map((id) => ledger[id]?.created ?? 0);
        const lost = creations.filter((n) => n === 0).length;
        const duplicated = creations.filter((n) => n > 1).length;
        const blindResends = Array.from({ length: GOOD_SENDS }, (_, i) => ledger[good(i)]?.duplicates_refused ?? 0).reduce(
          (a, b) => a + b,
          0,
        );
        trial.set({
          trials: kills,
          lost,
          duplicated,
          note: `500 rows; creations per external_id: ${creations.filter((n) => n === 1).length}x1; ${inDoubtAtKill} rows in doubt after kills; ${openAfterKills} open after the last kill; seed ${seed}`,
        });
        expect(lost).toBe(0);
        expect(duplicated).toBe(0);
        expect(blindResends, 'a good send was POSTed again after it had landed').toBe(0);
        for (let k = 0; k < GOOD_CANCELS; k++) expect(ledger[good(k * 9)]?.cancellations ?? 0).toBeGreaterThanOrEqual(1);
        for (let k = 0; k < CANCELS_BEHIND_TAKEN; k++) expect(ledger[taken(k)]?.cancellations ?? 0).toBe(0);

        // the vendor's side: every row settled, with its reason
        const rows = await db.sql<
          { id: number; external_id: string; kind: string; state: string; last_error: string | null; attempts: number }[]
        >`
          select id, external_id, kind, state, last_error, attempts from intake_sync.outbox_status order by id`;
        const byState = (kind: string, predicate: (id: string) => boolean) =>
          rows.filter((r) => r.kind === kind && predicate(r.external_id)).map((r) => r.state);
        const isGood = (id: string) => Number(id.slice(PREFIX.length + 1)) < GOOD_SENDS;
        const isTaken = (id: string) => !id.includes('never') && Number(id.slice(PREFIX.length + 1)) >= GOOD_SENDS;
        expect(byState('send', isGood)).toEqual(Array(GOOD_SENDS).fill('delivered'));
        expect(byState('cancel', isGood)).toEqual(Array(GOOD_CANCELS).fill('delivered'));
        const failed = rows.filter((r) => r.state === 'failed');
        expect(failed).toHaveLength(TAKEN_SENDS + CANCELS_BEHIND_TAKEN + UNKNOWN_CANCELS);
        for (const row of failed) {
          if (row.kind === 'send') {
            expect(isTaken(row.external_id)).toBe(true);
            expect(row.last_error).toBe('422 from the operator: prescription.external_id has already been taken (by another prescription)');
          } else if (row.external_id.includes('never')) {
            expect(row.last_error).toBe('not found at the operator');
          } else {
            expect(row.last_error).toMatch(/^its send \(outbox row \d+\) failed: nothing to cancel at the operator$/);
          }
        }
        // delivered sends are recorded locally (their events match); the cancelled ones carry it
        const [local] = await db.sql<{ n: number; cancelled: number }[]>`
          select count(*)::int as n, count(cancellation_requested_at)::int as cancelled from intake_sync.prescriptions`;
        expect(local).toEqual({ n: GOOD_SENDS, cancelled: GOOD_CANCELS });
        const maxAttempts = Math.max(...rows.map((r) => r.attempts));
        const [reconciled] = await db.sql<{ n: number }[]>`
          select count(*)::int as n from intake_sync.outbox where kind = 'send' and state = 'delivered' and response_status = 200`;
        console.info(
          `[${SCENARIO}] kills ${kills}, rows in doubt after kills ${inDoubtAtKill}, open after the last kill ${openAfterKills}, max attempts of a row ${maxAttempts}, sends found by GET after an ambiguous failure ${reconciled?.n}`,
        );
        expectNoLeaks(kit.capture, kit.needles());
      } finally {
        await kit.close();
      }
    });
  });
});

if (!available) recordSkip(SCENARIO, 'no PostgreSQL at 127.0.0.1:5432');
