import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type postgres from 'postgres';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { OutputCapture } from './capture.js';
import { killAllChildren } from './cli-process.js';
import { secretNeedles, type Needle } from './leaks.js';
import { startHostileUpstream, type HostileUpstream } from './hostile-upstream.js';
import { CAPTURE_DIR, type ScenarioDatabase } from './scenario-kit.js';
import { openSideConnection } from './store.js';
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
  const databases: TestDatabase[] = [];
  const sides: postgres.Sql[] = [];
  return {
    capture,
    upstream,
    async database() {
      const tdb = await createTestDatabase(`f_${label}`);
      databases.push(tdb);
      if (!tdb.url) throw new Error('the fault suite needs the real PostgreSQL server');
      await tdb.database.close();
      const sql = openSideConnection(tdb.url);
      sides.push(sql);
      return { url: tdb.url, sql, name: new URL(tdb.url).pathname.slice(1) };
    },
    setup: (db, env) => ({ api: upstream, databaseUrl: db.url, capture, env }),
    needles: () => [...needles],
    addNeedles: (more) => void needles.push(...more),
    async close() {
      await killAllChildren();
      mkdirSync(CAPTURE_DIR, { recursive: true });
      writeFileSync(
        join(CAPTURE_DIR, `${label}.log`),
        capture
          .all()
          .map((c) => `===== ${c.source} (${c.kind})\n${c.text}`)
          .join('\n'),
      );
      await upstream.close();
      await Promise.all(sides.map((s) => s.end({ timeout: 2 }).catch(() => {})));
      for (const tdb of databases) await tdb.drop().catch(() => {});
    },
  };
}
