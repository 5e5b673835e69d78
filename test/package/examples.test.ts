import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/connection.js';
import { prescriptionRequestSchema } from '../../src/intake/prescription.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import { runCli } from '../support/cli/run-cli.js';
import { startSandbox } from '../../src/sandbox/server.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const reachable = await postgresReachable();

describe('examples/prescription.json', () => {
  it('is a valid prescription by the spec (the request schema the CLI and the client validate with)', async () => {
    const parsed = prescriptionRequestSchema.safeParse(JSON.parse(await readFile(join(REPO, 'examples/prescription.json'), 'utf8')));
    expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
  });
});

describe.skipIf(!reachable)(`the examples run and end by themselves (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  let tdb: TestDatabase;
  let dir: string;

  beforeAll(async () => {
    tdb = await createTestDatabase('examples');
    // 'intake-sync' resolved to this checkout's source (no build needed): a shim package re-exporting src/index.ts
    dir = await mkdtemp(join(tmpdir(), 'intake-sync-example-'));
    await mkdir(join(dir, 'node_modules/intake-sync'), { recursive: true });
    await writeFile(
      join(dir, 'node_modules/intake-sync/package.json'),
      JSON.stringify({ name: 'intake-sync', type: 'module', exports: './index.mjs' }),
    );
    await writeFile(
      join(dir, 'node_modules/intake-sync/index.mjs'),
      `export * from ${JSON.stringify(pathToFileURL(join(REPO, 'src/index.ts')).href)};\n`,
    );
    await symlink(join(REPO, 'node_modules/postgres'), join(dir, 'node_modules/postgres'), 'dir');
    for (const file of ['node-api.mjs', 'prescription.json']) await copyFile(join(REPO, 'examples', file), join(dir, file));
  }, 60_000);
  afterAll(async () => {
    await tdb?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('the Node example registers, queues the sample prescription through the outbox, and ends without a daemon', async () => {
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
    const started = Date.now();
    const { stdout } = await run(process.execPath, ['--import', tsx, 'node-api.mjs'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: tdb.url ?? '' },
      timeout: 60_000,
    });
    expect(stdout).toContain("outbox [ 'pending' ]");
    expect(stdout).toContain('status null');
    // it stops 5 s after the last change (here: none), not never
    expect(Date.now() - started).toBeLessThan(45_000);
    const db = tdb.database.db;
    const rows = await queryRows<{ external_id: string }>(
      db,
      sql`select external_id from ${tdb.database.names.qualified('outbox_status')}`,
    );
    expect(rows.map((r) => r.external_id)).toEqual(['example-rx-1']);
  }, 90_000);

  it('the CLI sends the sample prescription file to the operator (the sandbox accepts it as the spec says)', async () => {
    const sandbox = await startSandbox({});
    try {
      const [credential] = sandbox.credentials;
      const result = await runCli(['prescriptions', 'send', 'examples/prescription.json', '--json'], {
        DATABASE_URL: tdb.url ?? '',
        INTAKE_API_BASE_URL: sandbox.baseUrl,
        INTAKE_API_KEY: credential?.key ?? '',
        INTAKE_API_SECRET: credential?.secret ?? '',
        // the Node example queued the same external_id in the outbox: send it under another one
        FEED_NAME: 'examples',
      });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(sandbox.store.requests.report('example-rx-1')).toEqual({
        'example-rx-1': { created: 1, duplicates_refused: 0, cancellations: 0 },
      });
    } finally {
      await sandbox.close();
    }
  }, 30_000);
});
