import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/connection.js';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../support/db.js';
import { cliBudget, runCli } from '../support/cli/run-cli.js';

// A container's arbitrary uid has no passwd entry: os.userInfo() throws there. Every command that
// records who ran it (checkpoint reset, events skip, resync, subscriptions migrate, quarantine)
// asks one function, src/lib/who-ran-this.ts, which answers uid-<n>@host instead of failing.
const UID = 48_213;
const asRoot = process.getuid?.() === 0;
const noPasswdEntry = spawnSync('getent', ['passwd', String(UID)]).status !== 0;
const available = asRoot && noPasswdEntry && (await postgresReachable());

describe.skipIf(!available)(`a command run by a uid with no passwd entry (${UID}; needs a root test runner)`, () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase('cli_no_passwd');
  });
  afterAll(() => tdb?.drop());

  it(
    'checkpoint reset runs and is audited as uid-N@host',
    async () => {
      const env = {
        DATABASE_URL: tdb.url as string,
        INTAKE_API_BASE_URL: 'http://127.0.0.1:9/intake_api/2024-12-10',
        INTAKE_API_KEY: 'k',
        INTAKE_API_SECRET: 's',
        HOME: '/tmp',
      };
      const result = await runCli(['checkpoint', 'reset', '--beginning', '--force'], env, { uid: UID });
      expect(result.code, result.stderr).toBe(0);
      const [reset] = await queryRows<{ reset_by: string }>(
        tdb.database.db,
        sql`select reset_by from intake_sync.checkpoint_resets order by id desc limit 1`,
      );
      expect(reset?.reset_by).toBe(`uid-${UID}@${hostname()}`);
    },
    cliBudget(1),
  );
});

describe('the commands that record who ran them ask one function', () => {
  it.each(['checkpoint/checkpoint.ts', 'events/skip.ts', 'resync/resync.ts', 'subscriptions/migrate.ts'])('%s', async (file) => {
    const { readFile } = await import('node:fs/promises');
    const source = await readFile(new URL(`../../src/cli/commands/${file}`, import.meta.url), 'utf8');
    expect(source).toContain('whoRanThis()');
    expect(source).not.toMatch(/userInfo\(/);
  });
});
