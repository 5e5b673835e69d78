import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { LEGACY_MIGRATION_HASHES, LEGACY_TABLES } from '../../src/db/legacy-public-install.js';
import { runMigrations } from '../../src/db/migrate.js';
import { loadCheckpoint, resetCheckpoint } from '../../src/sync/poll/checkpoint.js';
import { ADMIN_URL, createEmptyDatabase, NEEDS_POSTGRES, postgresReachable, type EmptyDatabase } from '../support/db.js';
import { runCli } from '../support/cli/run-cli.js';
import { installLegacy } from '../support/db/legacy-install.js';
import { roleTagStatement } from '../support/test-run.js';

const reachable = await postgresReachable();
const LEGACY_ROLE = `legacy_reader_${randomBytes(3).toString('hex')}`;

/** A 0.1 install with rows in every table. */
async function installLegacyWithRows(empty: EmptyDatabase): Promise<void> {
  await installLegacy(empty);
  await empty.sql.unsafe(`
    insert into public.prescriptions (external_id, patient_first_name, patient_last_name, patient_state, patient_dob, prescriber_npi,
      written_date, drug_ndc, identity_key, status, status_rank, status_event_id)
    values ('old-1', 'A', 'B', 'CA', '1980-01-01', '1234567893', '2024-01-01', '00002015204', 'k1', 'ordered', 2, 'ev-2'),
           ('old-2', 'C', 'D', 'NY', '1981-02-02', '1234567893', '2024-01-02', '00002024304', 'k2', null, 0, null);
    insert into public.events (id, feed, name, occurred_at, subscription_id, api_version, payload, raw, identity_key, status_rank, prescription_id)
    values ('ev-1', 'default', 'prescription.accepted', '2024-01-01T00:00:00Z', 'sub-1', '2024-12-10', '{}', '{"id":"ev-1"}', 'k1', 1, 1),
           ('ev-2', 'default', 'prescription.ordered', '2024-01-01T00:05:00Z', 'sub-1', '2024-12-10', '{}', '{"id":"ev-2"}', 'k1', 2, 1),
           ('ev-3', 'default', 'prescription.accepted', '2024-01-01T00:06:00Z', 'sub-9', '2024-12-10', '{}', '{"id":"ev-3"}', 'k9', 1, null);
    insert into public.quarantine (quarantine_key, event_id, feed, reason, detail, raw) values ('ev-3', 'ev-3', 'default', 'unmatched', 'no local prescription matches its identity', '{"id":"ev-3"}');
    insert into public.feed_checkpoints (feed, iterator, version, pages_applied, events_applied, events_quarantined) values ('default', 'it-7', 7, 3, 3, 1);
    insert into public.checkpoint_resets (feed, from_iterator, to_iterator, reset_by) values ('default', 'it-2', null, 'ops');`);
}

async function tableRows(empty: EmptyDatabase, schema: string): Promise<Record<string, unknown[]>> {
  const result: Record<string, unknown[]> = {};
  for (const table of LEGACY_TABLES)
    result[table] = [...(await empty.sql`select * from ${empty.sql(schema)}.${empty.sql(table)} order by 1`)];
  return result;
}

/** Columns, indexes, constraints and storage options of a deployment schema, schema name left out. */
async function catalog(sql: EmptyDatabase['sql'], schema: string): Promise<unknown> {
  const columns = await sql`select table_name, column_name, data_type, is_nullable, column_default
    from information_schema.columns where table_schema = ${schema} order by 1, 2`;
  const indexes = await sql`select tablename, indexname, replace(indexdef, ${`${schema}.`}, '') as def
    from pg_indexes where schemaname = ${schema} and tablename <> '__drizzle_migrations' order by 1, 2`;
  const constraints = await sql`select conrelid::regclass::text as rel, conname, pg_get_constraintdef(c.oid) as def
    from pg_constraint c join pg_namespace n on n.oid = c.connamespace where n.nspname = ${schema} order by 2`;
  const options = await sql`select relname, reloptions from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and c.relkind = 'r' order by 1`;
  const functions = await sql`select p.proname, pg_get_function_identity_arguments(p.oid) as args
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = ${schema} order by 1, 2`;
  return {
    columns,
    indexes,
    constraints: constraints.map((c) => ({ ...c, rel: String(c.rel).replace(`${schema}.`, '') })),
    options,
    functions,
  };
}

describe.skipIf(!reachable)(`upgrading a 0.1 install (tables in public) (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  let legacy: EmptyDatabase;
  let fresh: EmptyDatabase;
  beforeAll(async () => {
    legacy = await createEmptyDatabase('legacy_upgrade');
    fresh = await createEmptyDatabase('legacy_fresh');
    await installLegacyWithRows(legacy);
    // what a 0.1 deployment granted on its tables in public: its daemon's role, a reporting role, PUBLIC
    await legacy.sql.unsafe(`create role "${LEGACY_ROLE}";
      grant select, insert, update on public.prescriptions, public.events to "${LEGACY_ROLE}";
      grant usage on sequence public.prescriptions_id_seq to "${LEGACY_ROLE}";
      grant select on public.quarantine to public;`);
    await legacy.sql.unsafe(roleTagStatement(LEGACY_ROLE));
  });
  afterAll(async () => {
    await legacy?.drop();
    await fresh?.drop();
    const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop role if exists "${LEGACY_ROLE}"`).catch(() => {});
    await admin.end({ timeout: 1 });
  });

  it('the legacy fixture is what 0.1 recorded: its three hashes', async () => {
    const rows = await legacy.sql<
      { hash: string }[]
    >`select hash from drizzle.__drizzle_migrations where hash <> 'vendor-app-hash' order by id`;
    expect(rows.map((r) => r.hash)).toEqual([...LEGACY_MIGRATION_HASHES]);
  });

  it('run and migrate refuse to start a fresh schema beside it, naming the upgrade step', async () => {
    const result = await runCli(['migrate'], { DATABASE_URL: legacy.url });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('intake-sync migrate --adopt-public');
    const [schema] = await legacy.sql`select 1 from pg_namespace where nspname = 'intake_sync'`;
    expect(schema).toBeUndefined();
  });

  it('migrate --adopt-public moves every row into intake_sync, leaves the vendor ledger rows, and yields the schema a fresh install has', async () => {
    const before = await tableRows(legacy, 'public');
    const result = await runCli(['migrate', '--adopt-public'], { DATABASE_URL: legacy.url });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('moved prescriptions, events, feed_checkpoints, checkpoint_resets, quarantine');
    // the grants the tables carried from public are revoked, each named: roles use `intake-sync grants` now
    expect(result.stdout).toContain(`INSERT, SELECT, UPDATE on events from ${LEGACY_ROLE}`);
    expect(result.stdout).toContain('SELECT on quarantine from PUBLIC');
    const left = await legacy.sql`select c.relname, a.grantee::regrole::text as grantee
      from pg_class c join pg_namespace n on n.oid = c.relnamespace, aclexplode(c.relacl) a
      where n.nspname = 'intake_sync' and a.grantee <> c.relowner`;
    expect(left).toEqual([]);

    // 0005 gave prescriptions a feed: a 0.1 install ran the one feed `default`; 0012 gave findings expired_at, 0014 resolution and resolution_note (closed rows: matched)
    const withFeed = {
      ...before,
      // 0018 stamps terminal_at on prescriptions that had ended (delivered or rejected): none of these had
      // and 0025 records a delivered cancellation: a 0.1 install's outbox had none
      prescriptions: before.prescriptions!.map((row) => ({
        ...(row as object),
        feed: 'default',
        terminal_at: null,
        cancel_delivered_at: null,
      })),
      // 0011 marks a feed that holds a position as an operator's (feed_checkpoints.origin)
      feed_checkpoints: before.feed_checkpoints!.map((row) => ({ ...(row as object), origin: 'operator' })),
      quarantine: before.quarantine!.map((row) => ({
        ...(row as object),
        expired_at: null,
        resolution: (row as { resolved_at?: unknown }).resolved_at ? 'matched' : null,
        resolution_note: null,
      })),
    };
    expect(await tableRows(legacy, 'intake_sync')).toEqual(withFeed);
    const leftInPublic = await legacy.sql`select tablename from pg_tables where schemaname = 'public'`;
    expect(leftInPublic).toEqual([]);
    const ledger = await legacy.sql<{ hash: string }[]>`select hash from drizzle.__drizzle_migrations order by id`;
    expect(ledger.map((r) => r.hash)).toEqual(['vendor-app-hash']);

    const database = await openDatabase({ url: fresh.url });
    try {
      await runMigrations(database);
    } finally {
      await database.close();
    }
    expect(await catalog(legacy.sql, 'intake_sync')).toEqual(await catalog(fresh.sql, 'intake_sync'));
  });

  it('the adopted install keeps working: the checkpoint where it was, sequences continuing, migrations current', async () => {
    const database = await openDatabase({ url: legacy.url });
    try {
      expect(await runMigrations(database)).toEqual([]);
      expect(await loadCheckpoint(database.db, 'default')).toMatchObject({ iterator: 'it-7', version: 7, eventsApplied: 3 });
      await resetCheckpoint(database.db, 'default', { to: null, by: 'after-upgrade' });
      const ids = await legacy.sql<{ id: string }[]>`select id from intake_sync.checkpoint_resets order by id`;
      expect(ids.map((r) => Number(r.id))).toEqual([1, 2]);
    } finally {
      await database.close();
    }
  });
});
