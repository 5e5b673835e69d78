import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IntakeClient } from '../../src/intake/client.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { cliBudget, runCli } from '../support/cli/run-cli.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';

// A worker whose checkpoint was written against one run of the standalone simulator, resumed
// against a restarted one (a new feed in memory, on the same URL with the same credentials). The
// simulator's iterators were bare positions, so the restarted one read the old position as its
// own and the worker silently skipped that many events (4 of 300). A real operator refuses an
// iterator it did not issue: the simulator's iterators now carry the run that issued them, so the
// worker is refused, stops naming `resync`, applies nothing, and resync recovers every event.
// The worker was not at fault: it cannot tell a position the operator accepts from its own.

const reachable = await postgresReachable();
const CREDENTIAL = { key: 'restart-key', secret: 'restart-secret' };

describe.skipIf(!reachable)(`a restarted simulator (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  let tdb: TestDatabase;
  let sql: postgres.Sql;
  let sandbox: Sandbox | undefined;

  beforeAll(async () => {
    tdb = await createTestDatabase('sandbox_restart');
    sql = postgres(tdb.url ?? '', { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await sandbox?.close();
    await sql?.end({ timeout: 5 });
    await tdb?.drop();
  });

  const eventIds = async () => (await sql<{ id: string }[]>`select id from intake_sync.events where feed = 'default'`).map((r) => r.id);

  it(
    'refuses the last run’s position: nothing applied, the worker names resync, and resync recovers all 300 events',
    async () => {
      sandbox = await startSandbox({ credentials: [CREDENTIAL] });
      const port = sandbox.port;
      sandbox.store.seedBulk({ key: CREDENTIAL.key, count: 1 });
      const env = {
        DATABASE_URL: tdb.url ?? '',
        INTAKE_API_BASE_URL: sandbox.baseUrl,
        INTAKE_API_KEY: CREDENTIAL.key,
        INTAKE_API_SECRET: CREDENTIAL.secret,
        ONCE_MAX_FAILURES: '1',
      };
      const first = await runCli(['run', '--once'], env);
      expect(first.code, first.stderr).toBe(0);
      const before = await eventIds();
      expect(before).toHaveLength(4);

      // the restart: same port and credentials, a new feed of 300 events
      await sandbox.close();
      sandbox = await startSandbox({ port, credentials: [CREDENTIAL] });
      const seeded = sandbox.store.seedBulk({ key: CREDENTIAL.key, count: 75, prefix: 'second' });
      expect(seeded.events).toBe(300);

      const refused = await runCli(['run', '--once'], env);
      expect(refused.code).toBe(1);
      expect(`${refused.stdout}${refused.stderr}`).toMatch(/the operator refuses the stored iterator \(400\); run `intake-sync resync/);
      expect((await eventIds()).sort()).toEqual([...before].sort());

      const resync = await runCli(['resync'], env);
      expect(resync.code, resync.stderr).toBe(0);
      const drained = await runCli(['run', '--once'], env);
      expect(drained.code, drained.stderr).toBe(0);
      // every event of the restarted simulator's feed is applied now (its ids may repeat the first run's)
      const client = new IntakeClient({
        baseUrl: sandbox.baseUrl,
        apiKey: CREDENTIAL.key,
        apiSecret: CREDENTIAL.secret,
        timeoutMs: 10_000,
      });
      const served: string[] = [];
      for (let iterator: string | undefined, done = false; !done; ) {
        const page = await client.listEvents({ limit: 250, ...(iterator ? { iterator } : {}) });
        served.push(...page.events.map((event) => (event as { id: string }).id));
        iterator = page.meta.iterator;
        done = page.meta.done;
      }
      expect(served).toHaveLength(300);
      const after = new Set(await eventIds());
      expect(served.filter((id) => !after.has(id))).toEqual([]);
    },
    cliBudget(4),
  );
});
