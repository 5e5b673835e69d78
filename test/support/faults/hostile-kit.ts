import { OutputCapture } from './capture.js';
import { killAllChildren } from './cli-process.js';
import { secretNeedles, type Needle } from './leaks.js';
import { startHostileUpstream, type HostileUpstream } from './hostile-upstream.js';
import { ScenarioStores, saveCapture, type ScenarioDatabase } from './scenario-kit.js';
import type { WorkerSetup } from './worker.js';

/** A scenario against the hostile upstream instead of the sandbox (see openScenario for the sandbox's). */
export interface HostileKit {
  capture: OutputCapture;
  upstream: HostileUpstream;
  /** one fresh migrated database for this scenario (dropped at close) */
  database(): Promise<ScenarioDatabase>;
  setup(db: ScenarioDatabase, env?: Record<string, string>): WorkerSetup;
  needles(): Needle[];
  addNeedles(needles: Needle[]): void;
  close(): Promise<void>;
}

export async function openHostileScenario(label: string): Promise<HostileKit> {
  const capture = new OutputCapture();
  const upstream = await startHostileUpstream();
  const needles: Needle[] = secretNeedles(upstream.key, upstream.secret);
  const stores = new ScenarioStores();
  return {
    capture,
    upstream,
    database: () => stores.open(`f_${label}`),
    setup: (db, env) => ({ api: upstream, databaseUrl: db.url, capture, env }),
    needles: () => [...needles],
    addNeedles: (more) => void needles.push(...more),
    async close() {
      await killAllChildren();
      saveCapture(label, capture);
      await upstream.close();
      await stores.close();
    },
  };
}
