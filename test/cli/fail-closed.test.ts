import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/connection.js';
import { DATA_DIR_LOCK_FILE } from '../../src/db/data-dir-lock.js';
import { registerFeeds } from '../../src/db/feed-registry.js';
import { ManualClock } from '../../src/sandbox/clock.js';
import { sampleIdentity, samplePrescription } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { spawnCli, stopProcesses, type WorkerProcess } from '../support/process/worker-process.js';
import { createEmptyDatabase, createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import { runCli } from '../support/cli/run-cli.js';

// Issue 17 §2 "Fail closed", each reproduction of the issue as a user runs it: the CLI as a process,
// a real PostgreSQL, the simulator or a hostile server on real sockets.

const realServer = await postgresReachable();
let sandbox: Sandbox;
let operator: Record<string, string>;
let dir: string;
const children: WorkerProcess[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ clock: new ManualClock() });
  const credential = sandbox.credentials[0] ?? { key: '', secret: '' };
  operator = { INTAKE_API_BASE_URL: sandbox.baseUrl, INTAKE_API_KEY: credential.key, INTAKE_API_SECRET: credential.secret };
  dir = await mkdtemp(join(tmpdir(), 'fail-closed-'));
});
afterEach(() => stopProcesses(children));
afterAll(async () => {
  await sandbox?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** What a production database holds that the demo must never touch. */
async function productionState(tdb: TestDatabase) {
  const rows = (text: string) => queryRows<Record<string, unknown>>(tdb.database.db, sql.raw(text));
  return {
    checkpoints: await rows('select feed, iterator, version, origin from intake_sync.feed_checkpoints order by feed'),
    resets: await rows('select count(*)::int as n from intake_sync.checkpoint_resets'),
    prescriptions: await rows('select external_id from intake_sync.prescriptions order by external_id'),
    outbox: await rows('select external_id, state, attempts from intake_sync.outbox order by id'),
    changes: await rows('select count(*)::int as n from intake_sync.status_changes'),
  };
}

describe.skipIf(!realServer)('the demo never takes over a real database', () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase('fail_closed_demo');
    const { db } = tdb.database;
    // a production feed: claimed by a real run, a position, a prescription waiting in the outbox
    await registerFeeds(db, ['default'], 'operator');
    await db.execute(sql`update intake_sync.feed_checkpoints set iterator = 'real-7', version = 7 where feed = 'default'`);
    await db.execute(sql`select intake_sync.send_prescription(${JSON.stringify(samplePrescription(1, { prefix: 'prod' }))}::jsonb)`);
  });
  afterAll(() => tdb?.drop());

  it.each<[string, string[], Record<string, string>, RegExp]>([
    ['a Secret without INTAKE_API_BASE_URL', ['run', '--once'], {}, /INTAKE_API_BASE_URL: is required: DATABASE_URL is set/],
    ['the daemon, not --once', ['run'], {}, /INTAKE_API_BASE_URL: is required: DATABASE_URL is set/],
    [
      'an env file copied from the old .env.example',
      ['run'],
      { INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG: '0' },
      /INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG: must be 1 or unset/,
    ],
    ['run --demo on a database holding an operator feed', ['run', '--once', '--demo'], {}, /holds feed default, an operator's feed/],
  ])('%s: exit 2 naming the variable, nothing reset, seeded or delivered', async (_label, args, extra, message) => {
    const before = await productionState(tdb);
    const result = await runCli(args, { DATABASE_URL: tdb.url ?? '', HEALTH_PORT: '0', ...extra });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(await productionState(tdb)).toEqual(before);
    expect(before.outbox).toEqual([{ external_id: 'prod-1', state: 'pending', attempts: 0 }]);
  });
});

describe("a real run never reads the demo's database", () => {
  it('npm start (the demo) works with no environment; a real run on its DATA_DIR is refused naming the feed', async () => {
    const dataDir = join(dir, 'demo');
    const demo = await runCli(['run', '--once'], { DATA_DIR: dataDir, SANDBOX_TIME_SCALE: '100000' });
    expect(demo.code, demo.stderr).toBe(0);
    const real = await runCli(['run', '--once'], { ...operator, DATA_DIR: dataDir });
    expect(real.code).toBe(2);
    expect(real.stderr).toMatch(/holds feed default of the built-in simulator/);
  }, 120_000);
});

describe.skipIf(!realServer)('only migrate creates the schema', () => {
  it.each([
    ['status'],
    ['prescriptions', 'list'],
    ['quarantine', 'list'],
    ['rematch'],
    ['checkpoint', 'show'],
    ['checkpoint', 'reset', '--beginning', '--force'],
    ['resync', '--feed', 'default'],
  ])('%s against a database without it: exit 2 naming intake-sync migrate, nothing created', async (...args) => {
    const empty = await createEmptyDatabase('fail_closed_noschema');
    try {
      const result = await runCli(args, { ...operator, DATABASE_URL: empty.url });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain('run `intake-sync migrate`');
      expect(await empty.sql`select nspname from pg_namespace where nspname = 'intake_sync'`).toEqual([]);
    } finally {
      await empty.drop();
    }
  });

  it('prescriptions send against a database without it: refused before anything is sent', async () => {
    const empty = await createEmptyDatabase('fail_closed_send');
    const file = join(dir, 'rx.json');
    await writeFile(file, JSON.stringify(samplePrescription(5, { prefix: 'nosend' })));
    try {
      const result = await runCli(['prescriptions', 'send', file], { ...operator, DATABASE_URL: empty.url });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('run `intake-sync migrate`');
      expect(sandbox.store.requests.report('nosend-5')['nosend-5']).toBeFalsy();
      expect(await empty.sql`select nspname from pg_namespace where nspname = 'intake_sync'`).toEqual([]);
    } finally {
      await empty.drop();
    }
  });

  it('an embedded store that does not exist is not created', async () => {
    const missing = join(dir, 'never-created');
    const result = await runCli(['status'], { DATA_DIR: missing });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('run `intake-sync migrate`');
    expect(spawnSync('test', ['-e', missing]).status).not.toBe(0);
  });
});

describe('the embedded store is locked while a process uses it', () => {
  it("prescriptions import while npm start runs is refused naming the pid; a dead pid's lock is taken over", async () => {
    const dataDir = join(dir, 'locked');
    const daemon = spawnCli(['run'], { DATA_DIR: dataDir, HEALTH_HOST: '127.0.0.1', HEALTH_PORT: '0' });
    children.push(daemon);
    // the demo is up once it seeded (its store is open and locked by then)
    const deadline = Date.now() + 120_000;
    while (!daemon.logs().some((l) => String(l.msg ?? l.raw ?? '').includes('seeded demo prescriptions'))) {
      if (Date.now() > deadline) throw new Error(`the demo did not start: ${JSON.stringify(daemon.logs())}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const file = join(dir, 'import.ndjson');
    await writeFile(file, `${JSON.stringify({ external_id: 'lock-1', prescription_identity: sampleIdentity(1) })}\n`);
    const refused = await runCli(['prescriptions', 'import', file], { DATA_DIR: dataDir });
    expect(refused.code).toBe(2);
    expect(refused.stdout).not.toMatch(/imported/);
    expect(refused.stderr).toContain(`in use by process ${daemon.child.pid}`);
    expect(refused.stderr).toContain('DATABASE_URL');
    await stopProcesses(children);

    // kill -9 leaves the lock behind; a pid that no longer runs does not hold it
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    await writeFile(join(dataDir, DATA_DIR_LOCK_FILE), JSON.stringify({ pid: Number(dead), host: (await import('node:os')).hostname() }));
    const imported = await runCli(['prescriptions', 'import', file], { DATA_DIR: dataDir });
    expect(imported.code, imported.stderr).toBe(0);
    const listed = await runCli(['prescriptions', 'list', '--json'], { DATA_DIR: dataDir });
    expect(listed.stdout).toContain('lock-1');
    // three PGlite processes one after the other (each starts its own WASM Postgres): seconds each under load
  }, 150_000);
});

describe.skipIf(!realServer)('checkpoint reset asks the operator', () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase('fail_closed_reset');
  });
  afterAll(() => tdb?.drop());
  const env = () => ({ ...operator, DATABASE_URL: tdb.url ?? '' });
  const checkpoint = async () =>
    (
      await queryRows<{ iterator: string | null; version: string }>(
        tdb.database.db,
        sql`select iterator, version::text from intake_sync.feed_checkpoints where feed = 'default'`,
      )
    )[0];

  it("--to 'garbage!!' is refused by the operator and nothing changes; --dry-run changes nothing", async () => {
    const before = await checkpoint();
    const refused = await runCli(['checkpoint', 'reset', '--to', 'garbage!!'], env());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/refuses this iterator \(400\): nothing changed/);
    const dry = await runCli(['checkpoint', 'reset', '--beginning', '--dry-run'], env());
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^dry run: checkpoint of feed default would move \(beginning\) -> \(beginning\)/);
    expect(await checkpoint()).toEqual(before);
    expect(await queryRows(tdb.database.db, sql`select 1 from intake_sync.checkpoint_resets`)).toEqual([]);
  });

  it('--force sets it, audited; the worker then names the reset to undo, not resync', async () => {
    const forced = await runCli(['checkpoint', 'reset', '--to', 'garbage!!', '--force'], env());
    expect(forced.code, forced.stderr).toBe(0);
    const audit = await queryRows<{ action: string; feed: string; subject: string; detail: Record<string, unknown> }>(
      tdb.database.db,
      sql`select action, feed, subject, detail from intake_sync.audit_log where action = 'checkpoint.reset'`,
    );
    expect(audit).toEqual([
      {
        action: 'checkpoint.reset',
        feed: 'default',
        subject: 'garbage!!',
        detail: expect.objectContaining({ previous_iterator: null, new_iterator: 'garbage!!' }),
      },
    ]);
    const run = await runCli(['run', '--once'], { ...env(), HEALTH_PORT: '0' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('the operator refuses the iterator that `checkpoint reset` set');
    expect(run.stderr).toContain('undo the reset with `intake-sync checkpoint reset --feed default --beginning`');
    expect(run.stderr).not.toContain('intake-sync resync');
  });
});

describe.skipIf(!realServer)('a wrong base URL', () => {
  let tdb: TestDatabase;
  let server: Server;
  let eventsRequests = 0;
  beforeAll(async () => {
    tdb = await createTestDatabase('fail_closed_404');
    server = createServer((req, res) => {
      if (req.url?.includes('/events')) eventsRequests++;
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<h1>Not Found</h1>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await tdb?.drop();
  });

  it('404 on /events stops the feed at once naming the URL (not retried as transient)', async () => {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/intake_api/2024-12-10`;
    const result = await runCli(['run', '--once'], {
      DATABASE_URL: tdb.url ?? '',
      INTAKE_API_BASE_URL: base,
      INTAKE_API_KEY: 'k',
      INTAKE_API_SECRET: 's',
      HEALTH_PORT: '0',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`GET ${base}/events answered 404 Not Found: the operator base URL is wrong`);
    expect(eventsRequests).toBe(1);
  });

  it('NODE_TLS_REJECT_UNAUTHORIZED=0 is refused at start, naming it', async () => {
    const result = await runCli(['run', '--once'], { ...operator, DATABASE_URL: tdb.url ?? '', NODE_TLS_REJECT_UNAUTHORIZED: '0' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('NODE_TLS_REJECT_UNAUTHORIZED: must not be 0');
  });
});

it.skipIf(realServer)('skipped parts', () => {
  expect(NEEDS_POSTGRES).toBeTruthy();
});
