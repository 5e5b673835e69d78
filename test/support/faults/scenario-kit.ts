import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type postgres from 'postgres';
import { expect } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../db.js';
import { OutputCapture } from './capture.js';
import { killAllChildren } from './cli-process.js';
import { readWholeFeed, type FeedEntry } from './feed-reader.js';
import { identityOf, prescriptionsForFeed, toImportFile, type LocalPrescription } from './local-prescriptions.js';
import { identityNeedles, secretNeedles, type Needle } from './leaks.js';
import { startSandboxProcess, type SandboxProcess } from './sandbox-process.js';
import { openSideConnection } from './store.js';
import { runCommand, type WorkerSetup } from './worker.js';

/** Where each scenario's captured output is left after it closes, for diagnosis. */
export const CAPTURE_DIR = join(tmpdir(), 'intake-sync-faults-logs');

/** One worker database with the harness's side connection to it. */
export interface ScenarioDatabase {
  url: string;
  sql: postgres.Sql;
  name: string;
}

/** The databases of one scenario and the marked side connections the harness reads them through. */
export class ScenarioStores {
  private readonly databases: TestDatabase[] = [];
  private readonly sides: postgres.Sql[] = [];

  /** A fresh migrated database, dropped at close(). */
  async open(label: string): Promise<ScenarioDatabase> {
    const tdb = await createTestDatabase(label);
    this.databases.push(tdb);
    if (!tdb.url) throw new Error('the fault suite needs the real PostgreSQL server');
    // the harness talks through its own marked connection; the helper's pool is not needed
    await tdb.database.close();
    const sql = openSideConnection(tdb.url);
    this.sides.push(sql);
    return { url: tdb.url, sql, name: new URL(tdb.url).pathname.slice(1) };
  }

  async close(): Promise<void> {
    await Promise.all(this.sides.map((s) => s.end({ timeout: 2 }).catch(() => {})));
    for (const tdb of this.databases) await tdb.drop().catch(() => {});
  }
}

/** Writes everything a scenario's processes printed to CAPTURE_DIR/<label>.log, for a reader after a failure. */
export function saveCapture(label: string, capture: OutputCapture): void {
  mkdirSync(CAPTURE_DIR, { recursive: true });
  writeFileSync(
    join(CAPTURE_DIR, `${label}.log`),
    capture
      .all()
      .map((c) => `===== ${c.source} (${c.kind})\n${c.text}`)
      .join('\n'),
  );
}

/** Everything one scenario file shares: a sandbox process, output capture, databases, a temp dir. */
export interface ScenarioKit {
  capture: OutputCapture;
  sandbox: SandboxProcess;
  tempDir: string;
  /** a fresh migrated database (dropped at close) */
  database(label: string): Promise<ScenarioDatabase>;
  /** worker setup for a database, with optional env overrides */
  setup(db: ScenarioDatabase, env?: Record<string, string>): WorkerSetup;
  /** secret needles of this sandbox's credential (plus any added later via addNeedles) */
  needles(): Needle[];
  addNeedles(needles: Needle[]): void;
  close(): Promise<void>;
}

/** Starts the shared pieces with a credential unique to this run. */
export async function openScenario(label: string): Promise<ScenarioKit> {
  const capture = new OutputCapture();
  const key = `key-${label}-${randomBytes(4).toString('hex')}`;
  const secret = `secret-${randomBytes(18).toString('hex')}`;
  const sandbox = await startSandboxProcess(capture, { key, secret });
  const tempDir = mkdtempSync(join(tmpdir(), `faults-${label}-`));
  const stores = new ScenarioStores();
  const needles: Needle[] = secretNeedles(key, secret);
  return {
    capture,
    sandbox,
    tempDir,
    database: (dbLabel) => stores.open(`f_${label}_${dbLabel}`),
    setup: (db, env) => ({ api: sandbox, databaseUrl: db.url, capture, env }),
    needles: () => [...needles],
    addNeedles: (more) => void needles.push(...more),
    async close() {
      await killAllChildren();
      saveCapture(label, capture);
      await sandbox.stop();
      await stores.close();
      rmSync(tempDir, { recursive: true, force: true });
    },
  };
}

/** A seeded feed as read back, with the local prescriptions that match it. */
export interface PreparedFeed {
  feed: FeedEntry[];
  prescriptions: LocalPrescription[];
  importFile: string;
}

/**
 * Reads the whole feed (transport faults must be off), derives one local
 * prescription per identity in it, writes the import file and adds the
 * identities' names and DOBs as canary needles.
 */
export async function readFeedAndPrescriptions(
  kit: ScenarioKit,
  iteratorMode: 'after' | 'at',
  externalPrefix: string,
  /** edits the derived list: drop identities to leave unmatched, add twins to make them ambiguous */
  adjust: (derived: LocalPrescription[]) => LocalPrescription[] = (derived) => derived,
): Promise<PreparedFeed> {
  const feed = await readWholeFeed(kit.sandbox, iteratorMode);
  const prescriptions = adjust(prescriptionsForFeed(feed, externalPrefix));
  const importFile = join(kit.tempDir, `${externalPrefix}.ndjson`);
  writeFileSync(importFile, toImportFile(prescriptions));
  kit.addNeedles(identityNeedles(feed.map(identityOf).filter((i) => i !== undefined)));
  return { feed, prescriptions, importFile };
}

/** Registers the prepared local prescriptions in a worker database through the CLI. */
export async function importPrescriptions(kit: ScenarioKit, db: ScenarioDatabase, prepared: PreparedFeed): Promise<void> {
  const result = await runCommand(kit.setup(db), ['prescriptions', 'import', prepared.importFile], 120_000);
  expect(result.code, `prescriptions import failed: ${result.stderr.slice(-1000)}`).toBe(0);
  const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from intake_sync.prescriptions`;
  expect(row?.n).toBe(prepared.prescriptions.length);
}
