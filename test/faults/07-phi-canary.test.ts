import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { postgresReachable } from '../support/db.js';
import { canaryPatient } from '../support/faults/canary-fixtures.js';
import { wellFormedEvent } from '../support/faults/hostile-events.js';
import { expectNoLeaks, findLeaks } from '../support/faults/leaks.js';
import { toImportFile } from '../support/faults/local-prescriptions.js';
import { PostgresOutage } from '../support/faults/postgres-outage.js';
import { TRANSPORT_CALM } from '../support/faults/sandbox-admin.js';
import { openScenario } from '../support/faults/scenario-kit.js';
import { recordSkip, runScenario } from '../support/faults/trials.js';
import { waitFor } from '../support/wait-for.js';
import { runCommand, startWorker, stopWorker, waitUntilLive } from '../support/faults/worker.js';

const SCENARIO = '7. PHI canary: no name, DOB, phone, street or email in any log, error, health body or metric';
const SENT = 4;

const available = await postgresReachable();

describe.skipIf(!available)(SCENARIO, () => {
  test('canaries flow through send, import, apply, quarantine and failures without appearing in output', async () => {
    await runScenario(SCENARIO, async (trial) => {
      const kit = await openScenario('canary');
      let outage: PostgresOutage | undefined;
      try {
        const db = await kit.database('main');
        outage = new PostgresOutage(db.name);
        const sent = Array.from({ length: SENT }, (_, i) => canaryPatient(i, { rejected: i === SENT - 1 }));
        const unmatched = canaryPatient(10);
        const ambiguous = canaryPatient(11);
        const malformed = canaryPatient(12);
        for (const c of [...sent, unmatched, ambiguous, malformed]) kit.addNeedles(c.needles);
        const setup = kit.setup(db);

        // PHI enters through the CLI (send: the full prescription; import: identities)
        for (const c of sent) {
          const file = join(kit.tempDir, `${c.prescription.external_id}.json`);
          writeFileSync(file, JSON.stringify({ prescription: c.prescription }));
          const result = await runCommand(setup, ['prescriptions', 'send', file]);
          expect(result.code, result.stderr).toBe(0);
        }
        const importFile = join(kit.tempDir, 'canaries.ndjson');
        writeFileSync(
          importFile,
          toImportFile([
            ...sent.map((c) => ({ external_id: c.prescription.external_id, prescription_identity: c.identity })),
            { external_id: 'canary-ambiguous-a', prescription_identity: ambiguous.identity },
            { external_id: 'canary-ambiguous-b', prescription_identity: ambiguous.identity },
          ]),
        );
        expect((await runCommand(setup, ['prescriptions', 'import', importFile])).code).toBe(0);

        // and through the feed: applied, unmatched, ambiguous and malformed events
        await kit.sandbox.admin.advanceClock(30 * 60_000);
        const when = new Date().toISOString();
        const { id: _dropped, ...withoutId } = wellFormedEvent('x', 'accepted', malformed.identity, when);
        await kit.sandbox.admin.inject([
          wellFormedEvent('canary-unmatched', 'accepted', unmatched.identity, when),
          wellFormedEvent('canary-ambiguous', 'accepted', ambiguous.identity, when),
          withoutId,
          { ...wellFormedEvent('canary-badname', 'accepted', malformed.identity, when), name: 17 },
        ]);

        // failures while PHI is in flight: 5xx and truncated pages, a database blip
        await kit.sandbox.admin.setFaults({ ...TRANSPORT_CALM, errorRate: 0.3, truncatedRate: 0.2, retryAfterSeconds: 0 });
        const worker = await startWorker(setup);
        await waitUntilLive(worker);
        await waitFor(async () => ((await db.sql<{ n: number }[]>`select count(*)::int as n from intake_sync.events`)[0]?.n ?? 0) > 0, {
          what: 'some events applied',
          timeoutMs: 60_000,
          intervalMs: 100,
          probeErrors: 'retry',
        });
        await outage.terminateBackends();
        await kit.sandbox.admin.setFaults(TRANSPORT_CALM);
        await waitFor(
          async () => {
            const rows = await db.sql<
              { status: string | null }[]
            >`select status from intake_sync.prescriptions where external_id like 'canary-%' and external_id not like 'canary-ambiguous%'`;
            return (
              rows.length === SENT &&
              rows.filter((r) => r.status === 'delivered').length === SENT - 1 &&
              rows.some((r) => r.status === 'rejected')
            );
          },
          { what: 'the canary prescriptions to reach their final statuses', timeoutMs: 90_000, intervalMs: 250, probeErrors: 'retry' },
        );
        await waitFor(
          async () => {
            const rows = await db.sql<{ reason: string }[]>`select reason from intake_sync.quarantine`;
            const reasons = new Set(rows.map((r) => r.reason));
            return rows.length >= 4 && reasons.has('unmatched') && reasons.has('ambiguous') && reasons.has('malformed');
          },
          {
            what: 'quarantine to hold the unmatched, ambiguous and malformed canaries',
            timeoutMs: 30_000,
            intervalMs: 250,
            probeErrors: 'retry',
          },
        );
        for (const path of ['/healthz', '/readyz', '/metrics'] as const) await worker.health(path);

        // the operator-facing reports are health output too
        for (const args of [
          ['status', '--json'],
          ['checkpoint', 'show', '--json'],
          ['quarantine', 'list', '--json'],
          ['rematch'],
          ['prescriptions', 'list', '--json'],
        ]) {
          const result = await runCommand(setup, args);
          expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
          if (args[0] === 'status' || args[0] === 'checkpoint') kit.capture.add(`cli-${args.join('-')}:stdout`, 'health', result.stdout);
        }
        await stopWorker(worker);

        // positive control: the needles do match the PHI the worker stored
        const stored = await db.sql<{ raw: unknown }[]>`select raw from intake_sync.quarantine`;
        const control = findLeaks([{ source: 'db:quarantine.raw', kind: 'log', text: JSON.stringify(stored) }], kit.needles());
        expect(control.length, 'the canary needles match the stored PHI (positive control)').toBeGreaterThan(0);

        trial.set({
          trials: kit.needles().length,
          note: `${kit.needles().length} needles over ${kit.capture.all().length} captured sources (${kit.capture.size()} chars)`,
        });
        expectNoLeaks(kit.capture, kit.needles());
      } finally {
        await outage?.close();
        await kit.close();
      }
    });
  });
});

if (!available) recordSkip(SCENARIO, 'no PostgreSQL at 127.0.0.1:5432');
