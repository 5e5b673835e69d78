import { writeFileSync, mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { postgresReachable } from '../support/db.js';
import { metricValue } from '../support/faults/health.js';
import { openHostileScenario } from '../support/faults/hostile-kit.js';
import { expectNoLeaks, identityNeedles } from '../support/faults/leaks.js';
import { toImportFile, type Identity, type LocalPrescription } from '../support/faults/local-prescriptions.js';
import type { ScenarioDatabase } from '../support/faults/scenario-kit.js';
import { readCheckpoint, snapshotStore } from '../support/faults/store.js';
import { recordSkip, runScenario } from '../support/faults/trials.js';
import { waitFor } from '../support/wait-for.js';
import { exitReport, runCommand, runOnce, startWorker, stopWorker, waitUntilLive, type WorkerProcess } from '../support/faults/worker.js';

// Issue 17 part 1 through real sockets and a real worker process: a hostile operator (a raw TCP server,
// test/support/faults/hostile-upstream.ts) sends pages mixing good events with hostile ones, bodies far
// past MAX_RESPONSE_BYTES (chunked, or with a Content-Length that lies), and one event too large to read
// at all. The feed never stops for good, memory stays under the Deployment's limit, and the one event
// that does stop it is skipped by an audited command.

const A = '12a. hostile bodies: a page mixing good events with deep nesting, 3 kB strings, NUL, surrogates, 1e400, wrong types, duplicates';
const B = '12b. hostile bodies: 160 MB responses (chunked, and with a lying Content-Length) under the memory limit';
const C = '12c. hostile bodies: one event over MAX_RESPONSE_BYTES stops the feed; events skip passes exactly it';

const available = await postgresReachable();

/** The Deployment's memory limit in kB (deploy/kubernetes/deployment.yaml, `limits: memory: NNNMi`). */
function deploymentMemoryLimitKb(): number {
  const yaml = readFileSync(new URL('../../deploy/kubernetes/deployment.yaml', import.meta.url), 'utf8');
  const match = /limits:\s*\n(?:\s*#.*\n|\s*cpu:.*\n)*\s*memory:\s*(\d+)Mi/.exec(yaml);
  if (!match?.[1]) throw new Error('no `limits: memory: NNNMi` in deploy/kubernetes/deployment.yaml');
  return Number(match[1]) * 1024;
}

/** VmHWM (peak resident set since start) of a live process, in kB. */
function peakRssKb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(status);
  if (!match?.[1]) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(match[1]);
}

/** A base-26 run of letters: names stay one token for the leak scan (digits would split them). */
const letters = (n: number) => {
  let text = '';
  for (let v = n; text.length < 3 || v > 0; v = Math.floor(v / 26)) text = String.fromCharCode(97 + (v % 26)) + text;
  return text;
};

const identity = (first: string): Identity => ({
  patient_first_name: first,
  patient_last_name: 'Hostilebody',
  patient_state: 'NY',
  patient_dob: '1961-03-07',
  erx_message_id: null,
  prescriber_npi: '1234567893',
  written_date: '2024-12-01',
  drug_ndc: '00002015204',
});

/** A well-formed event's text; `payload` is raw JSON, written as is. */
const eventText = (id: string, name: string, who: Identity, minute: number, payload = '{}') =>
  `{"id":${JSON.stringify(id)},"name":${JSON.stringify(name)},"prescription_identity":${JSON.stringify(who)},"pharmacy_npi":"1689411712",` +
  `"occurred_at":"2025-01-01T12:${String(minute).padStart(2, '0')}:00.000Z","api_version":"2024-12-10","subscription_id":"sub-${id}","payload":${payload}}`;

const LONG = 3_000;

/** Texts a JSON parser accepts and the contract (or Postgres) does not: each must be quarantined `malformed`. */
function hostileTexts(who: Identity): Array<{ label: string; text: string; storableId: string | null }> {
  const good = (id: string, payload = '{}') => eventText(id, 'accepted', who, 1, payload);
  const withIdentity = (id: string, field: string, valueJson: string) =>
    good(id).replace(`"${field}":${JSON.stringify(who[field as keyof Identity])}`, `"${field}":${valueJson}`);
  return [
    { label: '5,000-level nesting', text: good('hb-deep', `{"deep":${'['.repeat(5_000)}${']'.repeat(5_000)}}`), storableId: 'hb-deep' },
    {
      label: '3 kB identity string',
      text: withIdentity('hb-long-name', 'patient_last_name', JSON.stringify(`Zq${'x'.repeat(LONG)}`)),
      storableId: 'hb-long-name',
    },
    {
      label: '3 kB erx_message_id',
      text: withIdentity('hb-long-erx', 'erx_message_id', JSON.stringify('E'.repeat(LONG))),
      storableId: 'hb-long-erx',
    },
    { label: 'NUL in the payload', text: good('hb-nul', '{"note":"a\\u0000b"}'), storableId: 'hb-nul' },
    { label: 'lone surrogate value', text: good('hb-surrogate', '{"note":"x\\ud800y"}'), storableId: 'hb-surrogate' },
    { label: 'lone surrogate key', text: good('hb-surrogate-key', '{"\\udc00":1}'), storableId: 'hb-surrogate-key' },
    {
      label: 'NUL in an identity field',
      text: withIdentity('hb-nul-name', 'patient_first_name', '"Hb\\u0000x"'),
      storableId: 'hb-nul-name',
    },
    { label: 'name 1e400', text: good('hb-inf-name').replace('"name":"accepted"', '"name":1e400'), storableId: 'hb-inf-name' },
    {
      label: 'occurred_at 1e400',
      text: good('hb-inf-time').replace(/"occurred_at":"[^"]+"/, '"occurred_at":1e400'),
      storableId: 'hb-inf-time',
    },
    { label: 'id of the wrong type', text: good('hb-x').replace('"id":"hb-x"', '"id":12345'), storableId: null },
    {
      label: 'identity of the wrong type',
      text: good('hb-str-identity').replace(/"prescription_identity":\{[^}]*\}/, '"prescription_identity":"someone"'),
      storableId: 'hb-str-identity',
    },
    {
      label: 'subscription_id of the wrong type',
      text: good('hb-obj-sub').replace('"subscription_id":"sub-hb-obj-sub"', '"subscription_id":{"wrong":"type"}'),
      storableId: 'hb-obj-sub',
    },
    { label: '3 kB id', text: good(`hb-${'i'.repeat(LONG)}`), storableId: null },
  ];
}

/** The ids in intake_sync.events, with how often each is there (the primary key makes it 1, checked anyway). */
async function storedEventIds(db: ScenarioDatabase): Promise<Map<string, number>> {
  const rows = await db.sql<{ id: string; n: number }[]>`select id, count(*)::int as n from intake_sync.events group by id`;
  return new Map(rows.map((r) => [r.id, r.n]));
}

/** Missing and extra ids against the expected set: the table's lost and duplicated columns. */
function diffIds(expected: ReadonlySet<string>, stored: Map<string, number>): { lost: string[]; extra: string[] } {
  const lost = [...expected].filter((id) => !stored.has(id));
  const extra = [...stored].flatMap(([id, n]) => (expected.has(id) ? (n > 1 ? [id] : []) : [id]));
  return { lost, extra };
}

async function waitForCheckpoint(db: ScenarioDatabase, iterator: string, worker: WorkerProcess, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    async () => {
      if (!worker.child.isRunning()) throw new Error(`${worker.label} exited; stderr tail: ${worker.child.stderr().slice(-1500)}`);
      return (await readCheckpoint(db.sql, 'default'))?.iterator === iterator;
    },
    { what: `the checkpoint to reach ${iterator}`, timeoutMs, intervalMs: 100, probeErrors: 'retry' },
  );
}

describe.skipIf(!available)('12. hostile bodies', () => {
  test('a: good events applied exactly once, every hostile one quarantined malformed, nothing logged', async () => {
    await runScenario(A, async (trial) => {
      const kit = await openHostileScenario('hostile_mix');
      const dir = mkdtempSync(join(tmpdir(), 'faults-hostile-mix-'));
      try {
        const db = await kit.database();
        const people = Array.from({ length: 120 }, (_, n) => identity(`Hbq${letters(n)}`));
        const prescriptions: LocalPrescription[] = people.map((who, n) => ({
          external_id: `hb-${String(n).padStart(4, '0')}`,
          prescription_identity: who,
        }));
        const good: string[] = [];
        for (const [n, who] of people.entries()) {
          good.push(eventText(`g-${n}-a`, 'accepted', who, 1));
          good.push(eventText(`g-${n}-b`, 'dispensed', who, 3));
        }
        // 1e400 in a payload is a number JSON cannot carry: parsed as Infinity, stored as null, the event is good
        good.push(eventText('g-inf-payload', 'ordered', people[1] as Identity, 2, '{"n":1e400,"m":-1e400}'));
        const hostile = hostileTexts(identity('Hbhostile'));
        // spread through the feed so every page of 50 mixes both; the duplicates come pages after their originals
        const texts: string[] = [];
        good.forEach((text, n) => {
          texts.push(text);
          if (n % 17 === 5 && hostile[Math.floor(n / 17)]) texts.push((hostile[Math.floor(n / 17)] as { text: string }).text);
        });
        texts.splice(texts.length - 20, 0, good[10] as string); // g-5-a again, byte for byte
        texts.splice(texts.length - 5, 0, eventText('g-7-b', 'rejected', people[7] as Identity, 9)); // an id reused with other content
        expect(texts.length).toBe(good.length + hostile.length + 2);
        kit.upstream.setEvents(texts);
        kit.addNeedles(identityNeedles([...people, identity('Hbhostile')]));
        kit.addNeedles([{ label: 'the 3 kB identity string', value: `Zq${'x'.repeat(LONG)}` }]);

        const importFile = join(dir, 'prescriptions.ndjson');
        writeFileSync(importFile, toImportFile(prescriptions));
        const imported = await runCommand(kit.setup(db), ['prescriptions', 'import', importFile]);
        expect(imported.code, imported.stderr.slice(-800)).toBe(0);

        const run = await runOnce(kit.setup(db, { PAGE_LIMIT: '50' }), 90_000);
        expect(run.code, `run --once did not drain the hostile feed: ${run.stderr.slice(-1500)}`).toBe(0);

        expect((await readCheckpoint(db.sql, 'default'))?.iterator).toBe(String(texts.length));
        const goodIds = new Set([...people.keys()].flatMap((n) => [`g-${n}-a`, `g-${n}-b`]).concat('g-inf-payload'));
        const { lost, extra } = diffIds(goodIds, await storedEventIds(db));
        const snapshot = await snapshotStore(db.sql);
        // the first copy of a reused id is the one applied: the later `rejected` changes nothing
        expect(snapshot.events['g-7-b']).toEqual({ name: 'dispensed', externalId: 'hb-0007' });
        for (const p of prescriptions) {
          const n = Number(p.external_id.slice(3));
          expect(snapshot.prescriptions[p.external_id], p.external_id).toMatchObject({ status: 'dispensed', statusEventId: `g-${n}-b` });
        }
        // no status change twice for one event, none from a hostile event, a duplicate or the late `ordered`
        // (a page records one change per prescription: accepted and dispensed in one page are one change)
        const changes = (await db.sql<{ event_id: string }[]>`select event_id from intake_sync.status_changes`).map((c) => c.event_id);
        expect(new Set(changes).size).toBe(changes.length);
        expect(changes.filter((id) => !goodIds.has(id) || id === 'g-inf-payload')).toEqual([]);
        expect(changes.length).toBeGreaterThanOrEqual(people.length);
        const quarantined = await db.sql<{ reason: string; event_id: string | null; detail: string; raw_text: string | null }[]>`
          select reason, event_id, detail, raw::text as raw_text from intake_sync.quarantine`;
        expect(quarantined.map((q) => q.reason).every((r) => r === 'malformed')).toBe(true);
        expect(quarantined).toHaveLength(hostile.length);
        const quarantinedIds = new Set(quarantined.map((q) => q.event_id));
        for (const h of hostile) if (h.storableId) expect(quarantinedIds.has(h.storableId), h.label).toBe(true);
        // the details are paths and rules: scanned like logs
        kit.capture.add('quarantine.detail', 'log', quarantined.map((q) => q.detail).join('\n'));
        trial.set({
          trials: hostile.length + 2,
          lost: lost.length,
          duplicated: extra.length,
          note: `${texts.length} entries (${goodIds.size} good, ${hostile.length} hostile, 2 duplicates), pages of 50: all hostile quarantined malformed`,
        });
        expect({ lost, extra }).toEqual({ lost: [], extra: [] });
        expectNoLeaks(kit.capture, kit.needles());
      } finally {
        rmSync(dir, { recursive: true, force: true });
        await kit.close();
      }
    });
  });

  test('b: 160 MB bodies, chunked and with a lying Content-Length: peak RSS under the Deployment limit, then the feed moves on', async () => {
    await runScenario(B, async (trial) => {
      const kit = await openHostileScenario('hostile_huge');
      try {
        const db = await kit.database();
        const people = Array.from({ length: 250 }, (_, n) => identity(`Hbr${letters(n)}`));
        const texts = people.flatMap((who, n) => [eventText(`r-${n}-a`, 'accepted', who, 1), eventText(`r-${n}-b`, 'dispensed', who, 3)]);
        kit.upstream.setEvents(texts);
        kit.addNeedles(identityNeedles(people));
        const huge = 160 * 1024 * 1024;
        // fewer answers too large than halvings from 250 to 1 (8): the feed must get through on its own
        kit.upstream.queue(
          { kind: 'chunked', bytes: huge },
          { kind: 'lying-length', declared: 1_000_000, bytes: huge },
          { kind: 'chunked', bytes: huge },
          { kind: 'lying-length', declared: 1_000_000, bytes: huge },
          { kind: 'chunked', bytes: huge },
        );
        const hostileAnswers = kit.upstream.pending();
        const limitKb = deploymentMemoryLimitKb();

        const worker = await startWorker(kit.setup(db));
        await waitUntilLive(worker);
        await waitForCheckpoint(db, String(texts.length), worker);
        const peakKb = peakRssKb(worker.child.pid);
        await waitFor(async () => (await worker.health('/readyz')).status === 200, {
          what: '/readyz to answer 200 once caught up',
          timeoutMs: 20_000,
          intervalMs: 200,
          probeErrors: 'retry',
        });
        await stopWorker(worker);
        expect((await worker.child.exited).code, exitReport(worker)).toBe(0);

        const served = kit.upstream.requests.filter((r) => r.answer !== 'page');
        expect(served).toHaveLength(hostileAnswers);
        const mostWrittenMb = Math.max(...served.map((r) => r.bodyBytesWritten)) / 1024 / 1024;
        const { lost, extra } = diffIds(new Set(texts.map((t) => (JSON.parse(t) as { id: string }).id)), await storedEventIds(db));
        trial.set({
          trials: hostileAnswers,
          lost: lost.length,
          duplicated: extra.length,
          note: `peak RSS ${Math.round(peakKb / 1024)} MB of the ${limitKb / 1024} Mi limit; each 160 MB body dropped after at most ${mostWrittenMb.toFixed(1)} MB written; limits asked ${kit.upstream.requests
            .slice(0, hostileAnswers + 3)
            .map((r) => r.limit)
            .join(',')}`,
        });
        expect(peakKb, `peak RSS ${peakKb} kB against the Deployment's ${limitKb} kB`).toBeLessThan(limitKb);
        // the client stopped reading each body long before its end (sockets buffer a few MB at most)
        expect(mostWrittenMb).toBeLessThan(32);
        expect({ lost, extra }).toEqual({ lost: [], extra: [] });
        expectNoLeaks(kit.capture, kit.needles());
      } finally {
        await kit.close();
      }
    });
  });

  test('c: one event over MAX_RESPONSE_BYTES stops the feed at its position; events skip passes exactly it, audited', async () => {
    await runScenario(C, async (trial) => {
      const kit = await openHostileScenario('hostile_oversized');
      try {
        const db = await kit.database();
        const cap = 65_536;
        const people = Array.from({ length: 300 }, (_, n) => identity(`Hbs${letters(n)}`));
        const texts = people.map((who, n) => eventText(`s-${n}`, 'accepted', who, 1));
        const at = 120;
        // larger than the cap alone, and nested deep: nothing on the way may try to parse it whole
        const big = eventText(
          'hb-huge',
          'accepted',
          identity('Hbhuge'),
          1,
          `{"blob":"${'x'.repeat(200_000)}","deep":${'['.repeat(20_000)}${']'.repeat(20_000)}}`,
        );
        texts.splice(at, 0, big);
        kit.upstream.setEvents(texts);
        kit.addNeedles(identityNeedles([...people, identity('Hbhuge')]));
        const env = { MAX_RESPONSE_BYTES: String(cap), PAGE_LIMIT: '100' };

        const worker = await startWorker(kit.setup(db, env));
        await waitUntilLive(worker);
        const stopped = await waitFor(
          async () => {
            const ready = await worker.health('/readyz');
            return ready.status === 503 && ready.body.includes('MAX_RESPONSE_BYTES') ? ready.body : undefined;
          },
          { what: '/readyz to name the oversized event', timeoutMs: 30_000, intervalMs: 200, probeErrors: 'retry' },
        );
        expect(stopped).toContain(`intake-sync events skip --feed default --at ${at}`);
        expect((await readCheckpoint(db.sql, 'default'))?.iterator).toBe(String(at));
        expect(metricValue((await worker.health('/metrics')).body, 'intake_sync_feed_event_too_large', 'feed="default"')).toBe(1);

        const skip = await runCommand(kit.setup(db, env), ['events', 'skip', '--feed', 'default', '--at', String(at), '--json']);
        expect(skip.code, skip.stderr.slice(-800)).toBe(0);
        expect(JSON.parse(skip.stdout)).toMatchObject({ feed: 'default', at: String(at), next: String(at + 1), event_id: 'hb-huge' });
        const audit = await db.sql<{ subject: string }[]>`select subject from intake_sync.audit_entries where action = 'event.skip'`;
        expect(audit.map((a) => a.subject)).toEqual(['hb-huge']);

        await waitForCheckpoint(db, String(texts.length), worker);
        await waitFor(async () => (await worker.health('/readyz')).status === 200, {
          what: '/readyz to answer 200 after the skip',
          timeoutMs: 20_000,
          intervalMs: 200,
          probeErrors: 'retry',
        });
        await stopWorker(worker);
        expect((await worker.child.exited).code, exitReport(worker)).toBe(0);

        const quarantined = await db.sql<
          { quarantine_key: string; reason: string }[]
        >`select quarantine_key, reason from intake_sync.quarantine where reason <> 'unmatched'`;
        // (no local prescriptions here: the good events are held `unmatched`, which is not this test's concern)
        expect(quarantined).toEqual([{ quarantine_key: 'hb-huge', reason: 'malformed' }]);
        const { lost, extra } = diffIds(new Set(people.map((_, n) => `s-${n}`)), await storedEventIds(db));
        trial.set({
          trials: 1,
          lost: lost.length,
          duplicated: extra.length,
          note: `${texts.length} entries, a ${Math.round(Buffer.byteLength(big) / 1024)} kB event at ${at} with MAX_RESPONSE_BYTES=${cap}: stopped there, skipped (audited), drained`,
        });
        expect({ lost, extra }).toEqual({ lost: [], extra: [] });
        expectNoLeaks(kit.capture, kit.needles());
      } finally {
        await kit.close();
      }
    });
  });
});

if (!available) recordSkip('12. hostile bodies', 'no PostgreSQL at 127.0.0.1:5432');
