import { compileDrainWorker, type CompiledWorker } from './compile-worker.js';
import { createBenchDatabase, type BenchDatabase } from './database.js';
import { runDrain } from './drain.js';
import { insertFillerPrescriptions } from './filler-prescriptions.js';
import { registerFixturePrescriptions } from './register.js';
import { startSandboxProcess, type SandboxProcess } from './sandbox-process.js';

const FEED = 'drain';

/**
 * The daemon's drain inside bench:page's rounds (`--drain N`): the compiled drain worker (the daemon's
 * worker as `run --once` wires it, with the daemon's V8 flags) drains N sandbox events into a fresh copy
 * of one template, once per round, so the drain, the product's page and the minimal page are measured in
 * the same run on the same machine load (issue 37's drain target is drain / minimal page >= 0.6x).
 */
export interface PageDrain {
  /** One drain into a fresh copy: its events per second and the worker's peak RSS. */
  run(round: number): Promise<{ eventsPerS: number; peakRssMb: number }>;
  close(keep: boolean): Promise<void>;
}

/**
 * Seeds the sandbox with N/4 prescriptions (four events each), registers their local prescriptions in the
 * drained feed through the production path, and adds `filler` untouched prescriptions, as bench:page's own
 * fixture has, so the drain's matches walk an index of the same depth.
 */
export async function preparePageDrain(serverUrl: string, tag: string, events: number, filler: number): Promise<PageDrain> {
  let worker: CompiledWorker | undefined;
  let sandbox: SandboxProcess | undefined;
  let template: BenchDatabase | undefined;
  try {
    worker = await compileDrainWorker();
    sandbox = await startSandboxProcess('page-drain');
    template = await createBenchDatabase(serverUrl, `bench_page_${tag}_drain`);
    const seeded = await sandbox.seed(Math.ceil(events / 4), 'pd');
    await registerFixturePrescriptions(template.database.db, 'pd', 0, seeded.prescriptions, FEED);
    await insertFillerPrescriptions(template.sql, 'filler', 1, filler, FEED);
    await template.sql`checkpoint`;
    await template.disconnect();
  } catch (error) {
    await template?.close(false).catch(() => {});
    await sandbox?.stop().catch(() => {});
    await worker?.remove().catch(() => {});
    throw error;
  }
  const [compiled, simulator, seededTemplate] = [worker, sandbox, template];
  return {
    async run(round) {
      const copy = await createBenchDatabase(serverUrl, `bench_page_${tag}_drain_${round}`, { template: seededTemplate.name });
      try {
        await copy.sql`checkpoint`;
        const drain = await runDrain(compiled.entry, simulator, copy.url, FEED);
        return { eventsPerS: drain.events_per_s, peakRssMb: drain.peak_rss_mb };
      } finally {
        await copy.close(false);
      }
    },
    async close(keep) {
      await seededTemplate.close(keep).catch(() => {});
      await simulator.stop().catch(() => {});
      await compiled.remove().catch(() => {});
    },
  };
}
