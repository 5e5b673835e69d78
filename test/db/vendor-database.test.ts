import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pino from 'pino';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { IntakeClient } from '../../src/intake/client.js';
import { ManualClock } from '../../src/sandbox/clock.js';
import { identityOf, samplePrescription } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { resetCheckpoint } from '../../src/sync/poll/checkpoint.js';
import { composeWorker, type WorkerSettings } from '../../src/sync/compose-worker.js';
import { listLocalPrescriptions, registerLocalPrescriptions } from '../../src/sync/matching/local-prescriptions.js';
import { listQuarantine } from '../../src/store-api/triage/quarantine-list.js';
import { rematch } from '../../src/operations/matching/rematch-held.js';
import { WorkerState } from '../../src/sync/state/worker-state.js';
import { catalogSnapshot } from '../support/catalog-snapshot.js';
import { createEmptyDatabase, NEEDS_POSTGRES, postgresReachable, type EmptyDatabase } from '../support/db.js';
import { runCli } from '../support/cli/run-cli.js';
import { waitFor } from '../support/wait-for.js';
import { fastWorkerSettings } from '../support/fast-settings.js';

const reachable = await postgresReachable();
const FIVE_MINUTES = 5 * 60_000;
const silent = pino({ level: 'silent' });
const settings: WorkerSettings = fastWorkerSettings();

/**
 * What a prescriber application's database already holds: tables named like ours, with other
 * columns and rows, a view, a function, and drizzle's default ledger with the app's own rows.
 */
const VENDOR_OBJECTS = `
  create table public.prescriptions (id serial primary key, rx_number text unique not null, patient_name text, written date);
  insert into public.prescriptions (rx_number, patient_name, written) values ('RX-1', 'Vendor Patient One', '2024-01-02'), ('RX-2', 'Vendor Patient Two', '2024-02-03');
  create table public.events (id bigserial primary key, kind text not null, at timestamptz not null default '2024-01-01T00:00:00Z');
  insert into public.events (kind) values ('login'), ('logout'), ('print');
  create table public.quarantine (id int primary key, note text);
  insert into public.quarantine values (1, 'vendor note');
  create table public.feed_state (k text primary key, v text);
  create view public.open_prescriptions as select rx_number from public.prescriptions;
  create function public.vendor_count() returns bigint language sql as 'select count(*) from public.prescriptions';
  create schema drizzle;
  create table drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint);
  insert into drizzle.__drizzle_migrations (hash, created_at) values ('vendor-hash-0001', 1700000000000), ('vendor-hash-0002', 1700000100000);
`;

/**
 * Every object and row outside the deployment schema, as pg_dump prints them; read from the
 * catalogs instead when the server is newer than the machine's pg_dump (the PostgreSQL matrix,
 * scripts/pg-matrix.sh: pg_dump refuses a newer server).
 */
async function dumpOutside(url: string, ours: readonly string[]): Promise<string> {
  if (!(await pgDumpCanRead(url))) return catalogSnapshot(url, ours);
  const { stdout } = await promisify(execFile)('pg_dump', ['--no-owner', ...ours.map((s) => `--exclude-schema=${s}`), url], {
    maxBuffer: 64 * 1024 * 1024,
  });
  // pg_dump 15.14+ brackets the dump with a random \restrict key
  return stdout
    .split('\n')
    .filter((line) => !/^\\(un)?restrict /.test(line))
    .join('\n');
}

let pgDumpReads: Promise<boolean> | undefined;
/** Whether the machine's pg_dump is at least the server's major (checked once). */
function pgDumpCanRead(url: string): Promise<boolean> {
  pgDumpReads ??= (async () => {
    const { stdout } = await promisify(execFile)('pg_dump', ['--version']).catch(() => ({ stdout: '' }));
    const client = Number(/(\d+)(\.\d+)?/.exec(stdout)?.[1] ?? 0);
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const [row] = await sql<{ num: string }[]>`select current_setting('server_version_num') as num`;
      return client >= Math.floor(Number(row?.num) / 10_000);
    } finally {
      await sql.end({ timeout: 1 });
    }
  })();
  return pgDumpReads;
}

/** Schema names on the server besides the system's: nothing new may appear but ours. */
async function schemas(empty: EmptyDatabase): Promise<string[]> {
  const rows = await empty.sql<{ nspname: string }[]>`
    select nspname from pg_namespace where nspname not like 'pg\\_%' and nspname <> 'information_schema' order by 1`;
  return rows.map((r) => r.nspname);
}

interface Deployment {
  database: Database;
  sandbox: Sandbox;
  client: IntakeClient;
  clock: ManualClock;
  close(): Promise<void>;
}

async function deployment(url: string, schema: string): Promise<Deployment> {
  const clock = new ManualClock();
  const sandbox = await startSandbox({ clock });
  const [credential] = sandbox.credentials;
  const client = new IntakeClient({ baseUrl: sandbox.baseUrl, apiKey: credential?.key ?? '', apiSecret: credential?.secret ?? '' });
  const database = await openDatabase({ url, schema });
  return {
    database,
    sandbox,
    client,
    clock,
    async close() {
      await database.close();
      await sandbox.close();
    },
  };
}

function workerFor(d: Deployment, url: string, state = new WorkerState({ now: () => Date.now() })) {
  return { state, worker: composeWorker({ database: d.database, databaseUrl: url, client: d.client, settings, state, log: silent }) };
}

describe.skipIf(!reachable)(`intake-sync inside a vendor's database (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  let empty: EmptyDatabase;
  beforeAll(async () => {
    empty = await createEmptyDatabase('vendor_db');
    await empty.sql.unsafe(VENDOR_OBJECTS);
  });
  afterAll(async () => {
    await empty?.drop();
  });

  it('migrate, a drain with rematch and a checkpoint reset leave every vendor object and row exactly as before', async () => {
    const before = await dumpOutside(empty.url, ['intake_sync']);
    const schemasBefore = await schemas(empty);

    const migrated = await runCli(['migrate'], { DATABASE_URL: empty.url, LOG_LEVEL: 'warn' });
    expect(migrated.stderr).toBe('');
    expect(migrated.stdout).toMatch(/^applied \d+ migrations and \d+ SQL API files to schema "intake_sync"/);

    const d = await deployment(empty.url, 'intake_sync');
    try {
      // sent to the operator but not registered locally: its events are held as unmatched
      const request = samplePrescription(1, { prefix: 'vendor' });
      await d.client.createPrescription(request);
      d.clock.advance(4 * FIVE_MINUTES);
      const first = await workerFor(d, empty.url).worker.drain();
      expect(first).toMatchObject({ drained: true, inserted: 4 });
      expect((await listQuarantine(d.database.db, { reason: 'unmatched' })).length).toBe(4);

      await registerLocalPrescriptions(d.database.db, [{ external_id: request.external_id, prescription_identity: identityOf(request) }]);
      await rematch(d.database.db);
      expect(await listLocalPrescriptions(d.database.db)).toMatchObject([{ external_id: 'vendor-1', status: 'delivered', events: 4 }]);

      await resetCheckpoint(d.database.db, 'default', { to: null, by: 'vendor-test' });
      const replay = await workerFor(d, empty.url).worker.drain();
      expect(replay).toMatchObject({ drained: true, inserted: 0 });
    } finally {
      await d.close();
    }

    expect(await schemas(empty)).toEqual([...schemasBefore, 'intake_sync'].sort());
    expect(await dumpOutside(empty.url, ['intake_sync'])).toBe(before);
    // and the vendor's rows are still theirs, read the way their app reads them
    const [vendor] = await empty.sql<{ n: string }[]>`select public.vendor_count() as n`;
    expect(Number(vendor?.n)).toBe(2);
    const ledger = await empty.sql<{ hash: string }[]>`select hash from drizzle.__drizzle_migrations order by id`;
    expect(ledger.map((r) => r.hash)).toEqual(['vendor-hash-0001', 'vendor-hash-0002']);
  });

  it('two deployments with different schema names run side by side, each leading its own feed, untouched by the other', async () => {
    const before = await dumpOutside(empty.url, ['intake_sync', 'sync_a', 'sync_b']);
    const a = await deployment(empty.url, 'sync_a');
    const b = await deployment(empty.url, 'sync_b');
    try {
      for (const [_d, schema] of [
        [a, 'sync_a'],
        [b, 'sync_b'],
      ] as const) {
        expect((await runCli(['migrate'], { DATABASE_URL: empty.url, DATABASE_SCHEMA: schema })).code).toBe(0);
      }
      // each deployment's operator account has its own prescription, registered only in its own schema
      const requestA = samplePrescription(1, { prefix: 'a' });
      const requestB = samplePrescription(2, { prefix: 'b', rejected: true });
      await a.client.createPrescription(requestA);
      await b.client.createPrescription(requestB);
      await registerLocalPrescriptions(a.database.db, [{ external_id: requestA.external_id, prescription_identity: identityOf(requestA) }]);
      await registerLocalPrescriptions(b.database.db, [{ external_id: requestB.external_id, prescription_identity: identityOf(requestB) }]);
      a.clock.advance(4 * FIVE_MINUTES);
      b.clock.advance(4 * FIVE_MINUTES);

      // both daemons at once: the same feed name, yet each takes its own lease
      const runA = workerFor(a, empty.url);
      const runB = workerFor(b, empty.url);
      const running = [runA.worker.run(), runB.worker.run()];
      try {
        await waitFor(() => runA.state.snapshot().role === 'leader' && runB.state.snapshot().role === 'leader', {
          timeoutMs: 10_000,
          what: 'both deployments leading',
        });
        await waitFor(
          async () =>
            (await listLocalPrescriptions(a.database.db))[0]?.status === 'delivered' &&
            (await listLocalPrescriptions(b.database.db))[0]?.status === 'rejected',
          { timeoutMs: 20_000, what: 'both feeds applied' },
        );
      } finally {
        await Promise.all([runA.worker.stop(), runB.worker.stop()]);
        await Promise.all(running);
      }
      expect(await listLocalPrescriptions(a.database.db)).toMatchObject([{ external_id: 'a-1', status: 'delivered', events: 4 }]);
      expect(await listLocalPrescriptions(b.database.db)).toMatchObject([{ external_id: 'b-2', status: 'rejected', events: 1 }]);
      for (const schema of ['sync_a', 'sync_b']) {
        const [q] = await empty.sql<{ n: number }[]>`select count(*)::int as n from ${empty.sql(schema)}.quarantine`;
        expect(q?.n, `${schema} quarantine`).toBe(0);
      }
    } finally {
      await a.close();
      await b.close();
    }
    expect(await dumpOutside(empty.url, ['intake_sync', 'sync_a', 'sync_b'])).toBe(before);
  });
});
