import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantsScript } from '../../src/db/grants-script.js';
import { grantsNotes, psqlScript } from '../../src/cli/commands/grants/grants.js';
import { grantStatements } from '../../src/db/grants.js';
import { ManualClock } from '../../src/sandbox/clock.js';
import { identityOf, samplePrescription } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { ADMIN_URL, createEmptyDatabase, NEEDS_POSTGRES, postgresReachable, type EmptyDatabase, urlAs } from '../support/db.js';
import { cliBudget, runCli } from '../support/cli/run-cli.js';
import { waitFor } from '../support/wait-for.js';
import { spawnCli } from '../support/process/worker-process.js';
import { roleTagStatement } from '../support/test-run.js';

const V1 = '2024-12-10';
const V2 = '2025-06-01';

const reachable = await postgresReachable();
const FIVE_MINUTES = 5 * 60_000;
const suffix = randomBytes(3).toString('hex');
/** Roles are cluster-wide: unique names, dropped at the end. */
const ROLES = { owner: `is_owner_${suffix}`, runtime: `is_runtime_${suffix}`, app: `is_app_${suffix}` };

describe.skipIf(!reachable)(
  `least privilege: an owner migrates, a runtime role with the listed grants runs (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`,
  () => {
    let empty: EmptyDatabase;
    let admin: postgres.Sql;
    let sandbox: Sandbox;
    const clock = new ManualClock();
    let upstreamEnv: Record<string, string>;

    beforeAll(async () => {
      empty = await createEmptyDatabase('least_privilege');
      admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
      for (const role of Object.values(ROLES)) {
        await admin.unsafe(`create role "${role}" login`);
        await admin.unsafe(roleTagStatement(role));
      }
      const dbName = new URL(empty.url).pathname.slice(1);
      // the owner may create schemas in this database and nothing else
      await admin.unsafe(`grant create on database "${dbName}" to "${ROLES.owner}"`);
      // two versions: `subscriptions migrate` moves the feed from the first to the second
      sandbox = await startSandbox({ clock, versions: [V1, V2] });
      const [credential] = sandbox.credentials;
      upstreamEnv = {
        INTAKE_API_BASE_URL: sandbox.baseUrl,
        INTAKE_API_KEY: credential?.key ?? '',
        INTAKE_API_SECRET: credential?.secret ?? '',
      };
    });
    afterAll(async () => {
      await sandbox?.close();
      await empty?.drop();
      for (const role of Object.values(ROLES)) await admin?.unsafe(`drop role if exists "${role}"`).catch(() => {});
      await admin?.end({ timeout: 5 });
    });

    async function asRole(role: string, body: (sql: postgres.Sql) => Promise<void>): Promise<void> {
      const sql = postgres(urlAs(empty.url, role), { max: 1, onnotice: () => {}, fetch_types: false });
      try {
        await body(sql);
      } finally {
        await sql.end({ timeout: 1 });
      }
    }

    it('migrate runs as the owner role; the runtime role cannot migrate', { timeout: cliBudget(2) }, async () => {
      const denied = await runCli(['migrate'], { DATABASE_URL: urlAs(empty.url, ROLES.runtime) });
      expect(denied.code).toBe(1);
      expect(denied.stderr).toMatch(/permission denied for database .* \(42501\)/);
      const migrated = await runCli(['migrate'], { DATABASE_URL: urlAs(empty.url, ROLES.owner) });
      expect(migrated.stderr).toBe('');
      expect(migrated.code).toBe(0);
      const [owner] = await empty.sql<
        { owner: string }[]
      >`select pg_get_userbyid(nspowner) as owner from pg_namespace where nspname = 'intake_sync'`;
      expect(owner?.owner).toBe(ROLES.owner);
    });

    it('without its grants, run refuses at start and names every missing grant', { timeout: cliBudget(1) }, async () => {
      const result = await runCli(['run', '--once'], {
        DATABASE_URL: urlAs(empty.url, ROLES.runtime),
        MIGRATE_ON_START: 'false',
        ...upstreamEnv,
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('USAGE on schema intake_sync');
      expect(result.stderr).toContain('intake-sync grants --role runtime');
    });

    // five CLI processes and a 30 s wait for the outbox: each its own budget (run-cli.ts)
    it('with exactly the grants docs/security.md lists, the runtime role drains, rematches and serves the SQL API', {
      timeout: cliBudget(5, 30_000),
    }, async () => {
      const grants = await runCli(['grants', '--role', 'runtime', '--to', ROLES.runtime], {});
      expect(grants.code).toBe(0);
      expect(grants.stdout.trim().split('\n')).toEqual(
        psqlScript(
          grantsScript('runtime', 'intake_sync', ROLES.runtime, { kind: 'unchanged' }),
          grantsNotes('runtime', ROLES.runtime, { kind: 'unchanged' }),
        ),
      );
      expect(grants.stdout).toContain(grantStatements('runtime', 'intake_sync', ROLES.runtime).join('\n'));
      await asRole(ROLES.owner, async (sql) => {
        // the statements after psql's own `\set ON_ERROR_STOP on` line, as psql would run them
        await sql.unsafe(grants.stdout.replace(/^\\set ON_ERROR_STOP on\n/m, ''));
        await sql.unsafe(grantStatements('app', 'intake_sync', ROLES.app).join('\n'));
      });

      const request = samplePrescription(1, { prefix: 'lp' });
      const client = await import('../../src/intake/client.js');
      const upstream = new client.IntakeClient({
        baseUrl: upstreamEnv.INTAKE_API_BASE_URL ?? '',
        apiKey: upstreamEnv.INTAKE_API_KEY ?? '',
        apiSecret: upstreamEnv.INTAKE_API_SECRET ?? '',
      });
      await upstream.createPrescription(request);
      clock.advance(4 * FIVE_MINUTES);

      const env = { DATABASE_URL: urlAs(empty.url, ROLES.runtime), MIGRATE_ON_START: 'false', ...upstreamEnv };
      const drained = await runCli(['run', '--once', '--json'], env);
      // the only thing said: the events of the prescription not registered yet were quarantined
      const said = drained.stderr
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { level: number; msg: string });
      expect(said.map((l) => [l.level, l.msg])).toEqual(said.map(() => [40, expect.stringMatching(/event\(s\) quarantined/)]));
      expect(JSON.parse(drained.stdout)).toMatchObject({ drained: true });

      // the vendor's app registers the prescription through the SQL API: its held events match
      await asRole(ROLES.app, async (sql) => {
        await sql`select * from intake_sync.register_prescription(${request.external_id}, ${JSON.stringify(identityOf(request))}::text::jsonb)`;
        const [status] = await sql`select status, events from intake_sync.prescription_status where external_id = ${request.external_id}`;
        expect(status).toMatchObject({ status: 'delivered', events: 4 });
        const changes = await sql`select * from intake_sync.status_changes_since(null, 10)`;
        expect(changes.length).toBeGreaterThan(0);
        // and reaches nothing else
        await expect(sql`select count(*) from intake_sync.prescriptions`).rejects.toThrow(/permission denied for table prescriptions/);
      });

      // the app queues a send and a cancel; the daemon, running as the runtime role, delivers both
      const queued = samplePrescription(2, { prefix: 'lp-outbox' });
      await asRole(ROLES.app, async (sql) => {
        await sql.begin(async (tx) => {
          await tx`select intake_sync.send_prescription(${JSON.stringify(queued)}::text::jsonb)`;
          await tx`select intake_sync.cancel_prescription(${queued.external_id})`;
        });
      });
      const daemon = spawnCli(['run'], { ...env, HEALTH_PORT: '0', POLL_INTERVAL_MS: '100', LOG_LEVEL: 'warn' });
      try {
        await waitFor(
          async () => {
            const rows = await empty.sql<
              { state: string }[]
            >`select state from intake_sync.outbox_status where external_id = ${queued.external_id}`;
            return rows.length === 2 && rows.every((r) => r.state !== 'pending');
          },
          { timeoutMs: 30_000, what: 'the outbox delivered by the runtime role' },
        );
      } finally {
        daemon.child.kill('SIGTERM');
        await daemon.exited;
      }
      const delivered = await empty.sql<{ kind: string; state: string; last_error: string | null }[]>`
      select kind, state, last_error from intake_sync.outbox_status where external_id = ${queued.external_id} order by id`;
      expect(delivered).toEqual([
        { kind: 'send', state: 'delivered', last_error: null },
        { kind: 'cancel', state: 'delivered', last_error: null },
      ]);
      expect(daemon.logs().filter((l) => l.level !== undefined && Number(l.level) >= 50)).toEqual([]);

      const rematched = await runCli(['rematch'], env);
      expect(rematched.stderr).toBe('');
      expect(rematched.code).toBe(0);
      const status = await runCli(['status', '--json'], env);
      expect(status.code).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ prescriptions: { total: 2 }, outbox: { pending: 0 } });
    });

    // fifteen CLI processes and the follower's 20 s wait, each with its own budget (run-cli.ts): one 30 s
    // figure for the whole list timed out in every PostgreSQL matrix leg on a slower machine (issue 23)
    it('every command the runtime role is documented to run works with only the runtime grants, and the changing ones are audited as that role', {
      timeout: cliBudget(15, 20_000),
    }, async () => {
      const env = { DATABASE_URL: urlAs(empty.url, ROLES.runtime), MIGRATE_ON_START: 'false', ...upstreamEnv };
      const dir = await mkdtemp(join(tmpdir(), 'least-privilege-'));
      const ok = async (args: string[]) => {
        const result = await runCli(args, env);
        expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: expect.any(String) });
        expect(result.stderr).not.toMatch(/permission denied|42501/);
        return result;
      };
      try {
        const sent = samplePrescription(3, { prefix: 'lp-cli' });
        await writeFile(join(dir, 'rx.json'), JSON.stringify({ prescription: sent }));
        await ok(['prescriptions', 'send', join(dir, 'rx.json')]);
        await ok(['prescriptions', 'cancel', sent.external_id]);
        const faxed = samplePrescription(4, { prefix: 'lp-fax' });
        await writeFile(
          join(dir, 'import.ndjson'),
          `${JSON.stringify({ external_id: faxed.external_id, prescription_identity: identityOf(faxed) })}\n`,
        );
        await ok(['prescriptions', 'import', join(dir, 'import.ndjson'), '--subscribe']);
        await ok(['prescriptions', 'list', '--json']);
        await ok(['quarantine', 'list', '--json']);
        await ok(['checkpoint', 'show', '--json']);
        await ok(['checkpoint', 'reset', '--beginning']);
        // --force: the feed is healthy (resync refuses one the operator still serves); this is about the grants
        await ok(['resync', '--force', '--json']);
        await ok(['rematch', '--json']);
        // deletes the progress rows of an earlier migration to the same version: DELETE on subscription_migrations
        await ok(['subscriptions', 'migrate', '--to-base-url', sandbox.baseUrlFor(V2), '--json']);
        clock.advance(4 * FIVE_MINUTES);
        const drained = await ok(['run', '--once', '--json']);
        expect(JSON.parse(drained.stdout.trim().split('\n')[0] ?? '{}')).toMatchObject({ drained: true });
        await ok(['status', '--json']);

        // changes follow: LISTEN and status_changes_since as the runtime role, until stopped
        const follower = spawnCli(['changes', 'follow', '--json'], { ...env, LOG_LEVEL: 'warn' });
        try {
          await waitFor(async () => follower.stdout().includes('"cursor"'), {
            timeoutMs: 20_000,
            what: 'changes follow printing a change',
          });
        } finally {
          follower.child.kill('SIGTERM');
          await follower.exited;
        }
        expect(follower.logs().filter((l) => /permission denied/.test(JSON.stringify(l)))).toEqual([]);

        const audit = await ok(['audit', 'list', '--json', '--limit', '100']);
        const entries = audit.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as { actor: string; action: string; subject: string | null });
        const byRuntime = entries.filter((e) => e.actor.startsWith(`${ROLES.runtime} (`));
        expect(new Set(byRuntime.map((e) => e.action))).toEqual(
          new Set([
            'checkpoint.reset',
            'prescription.send',
            'prescription.cancel',
            'prescription.import',
            'feed.resync',
            'rematch.run',
            'subscriptions.migrate',
          ]),
        );
        expect(byRuntime.find((e) => e.action === 'prescription.send')?.subject).toBe(sent.external_id);
        // the app's SQL API calls earlier in this file, as the app role
        expect(entries.filter((e) => e.actor === ROLES.app).map((e) => e.action)).toEqual(
          expect.arrayContaining(['prescription.register', 'outbox.send', 'outbox.cancel']),
        );
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('with one grant revoked, run names exactly that grant', { timeout: cliBudget(1) }, async () => {
      await asRole(ROLES.owner, async (sql) => {
        await sql.unsafe(`revoke insert on intake_sync.quarantine from "${ROLES.runtime}"`);
      });
      const result = await runCli(['run', '--once'], {
        DATABASE_URL: urlAs(empty.url, ROLES.runtime),
        MIGRATE_ON_START: 'false',
        ...upstreamEnv,
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('lacks 1 grant(s) the daemon needs: INSERT on intake_sync.quarantine.');
    });
  },
);
