import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/sandbox/clock.js';
import { samplePrescription } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { IntakeClient } from '../../src/intake/client.js';
import { createEmptyDatabase, NEEDS_POSTGRES, postgresReachable, type EmptyDatabase } from '../support/db.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLE = join(REPO, 'examples/node-api.mjs');
const reachable = await postgresReachable();
const FIVE_MINUTES = 5 * 60_000;

describe.skipIf(!reachable)(`the packed package as a dependency (${reachable ? 'npm pack + install' : NEEDS_POSTGRES})`, () => {
  let dir: string;
  let empty: EmptyDatabase;
  let sandbox: Sandbox;
  const clock = new ManualClock();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'intake-sync-dependent-'));
    empty = await createEmptyDatabase('installed_package');
    sandbox = await startSandbox({ clock });
    const { stdout } = await run('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: REPO, maxBuffer: 16 * 1024 * 1024 });
    const tarball = stdout.trim().split('\n').pop() ?? '';
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'vendor-app', private: true, type: 'module' }));
    await run('npm', ['install', '--omit=dev', '--no-audit', '--no-fund', join(dir, tarball)], { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
  }, 240_000);
  afterAll(async () => {
    await sandbox?.close();
    await empty?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('docs/node-api.md shows the example verbatim', async () => {
    const page = await readFile(join(REPO, 'docs/node-api.md'), 'utf8');
    expect(page).toContain((await readFile(EXAMPLE, 'utf8')).trim());
  });

  it('exports typed entry points: the package.json exports map and the declarations', async () => {
    const pkg = JSON.parse(await readFile(join(dir, 'node_modules/intake-sync/package.json'), 'utf8')) as {
      exports: Record<string, unknown>;
    };
    expect(pkg.exports['.']).toEqual({ types: './dist/index.d.ts', import: './dist/index.js' });
    const types = await readFile(join(dir, 'node_modules/intake-sync/dist/index.d.ts'), 'utf8');
    for (const name of ['intakeSyncApi', 'followStatusChanges', 'IntakeClient', 'PrescriptionRequest']) expect(types).toContain(name);
  });

  it('runs the documented example against a deployment: register, send through the outbox, status, follow changes', async () => {
    const bin = join(dir, 'node_modules/.bin/intake-sync');
    const [credential] = sandbox.credentials;
    const env = {
      ...process.env,
      DATABASE_URL: empty.url,
      INTAKE_API_BASE_URL: sandbox.baseUrl,
      INTAKE_API_KEY: credential?.key ?? '',
      INTAKE_API_SECRET: credential?.secret ?? '',
      LOG_LEVEL: 'warn',
    };
    await run(bin, ['migrate'], { cwd: dir, env });
    // the fax prescription's events reach the feed before the vendor registers it: held as unmatched
    const fax = samplePrescription(1, { prefix: 'fax' });
    fax.external_id = 'fax-op-1';
    fax.patient = {
      ...fax.patient,
      first_name: 'Ada',
      last_name: 'Lovelace',
      dob: '1990-12-10',
      address: { ...fax.patient.address, state: 'NY' },
    };
    fax.prescriber = { ...fax.prescriber, npi: '1234567893' };
    fax.written_date = '2026-11-20';
    fax.medication = { ...fax.medication, ndc: '00002015204' };
    const client = new IntakeClient({ baseUrl: sandbox.baseUrl, apiKey: credential?.key ?? '', apiSecret: credential?.secret ?? '' });
    await client.createPrescription(fax);
    clock.advance(4 * FIVE_MINUTES);
    await run(bin, ['run', '--once'], { cwd: dir, env });

    await writeFile(join(dir, 'prescription.json'), JSON.stringify(samplePrescription(2, { prefix: 'vendor' })));
    await writeFile(join(dir, 'example.mjs'), await readFile(EXAMPLE, 'utf8'));
    const { stdout } = await run(process.execPath, ['example.mjs'], { cwd: dir, env, timeout: 60_000 });
    expect(stdout).toContain("outbox [ 'pending' ]");
    expect(stdout).toContain('status delivered');
    expect(stdout).toContain('change fax-1001 null -> delivered');
  });
});

describe('docs/security.md lists the grants the code checks', () => {
  it('runtime and app grants, exactly as `intake-sync grants` prints them', async () => {
    const { grantStatements } = await import('../../src/db/grants.js');
    const page = await readFile(join(REPO, 'docs/security.md'), 'utf8');
    expect(page).toContain(grantStatements('runtime', 'intake_sync', 'intake_sync_runtime').join('\n'));
    expect(page).toContain(grantStatements('app', 'intake_sync', 'vendor_app').join('\n'));
  });
});
