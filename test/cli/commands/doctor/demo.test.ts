import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA_DIR_LOCK_FILE } from '../../../../src/db/data-dir-lock.js';
import { runCli } from '../../../support/cli/run-cli.js';

// `doctor` with nothing configured checks the demo's own setup (docs/getting-started.md offers it
// as a check of the demo): the embedded store, and the built-in simulator started and asked for a page
describe('intake-sync doctor in the demo', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'doctor-demo-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('before the first start: passes, says it is the demo and that npm start creates the store', async () => {
    const result = await runCli(['doctor'], { DATA_DIR: dataDir });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ok\s+configuration\s+the demo: nothing is configured/m);
    expect(result.stdout).toMatch(/^ok\s+database\s+no embedded store under .* yet: `npm start`/m);
    expect(result.stdout).toMatch(/^ok\s+simulator\s+the built-in simulator starts on a loopback port and answers GET \/events/m);
  }, 120_000);

  it('after migrate: checks the embedded schema; --json says the same', async () => {
    expect((await runCli(['migrate'], { DATA_DIR: dataDir })).code).toBe(0);
    const result = await runCli(['doctor', '--json'], { DATA_DIR: dataDir });
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { ok: boolean; checks: { check: string; ok: boolean; detail: string }[] };
    expect(report.ok).toBe(true);
    expect(report.checks.map((c) => c.check)).toEqual(['configuration', 'database', 'simulator']);
    expect(report.checks[1]?.detail).toMatch(/embedded PGlite under .*: "intake_sync" at \d{4}_/);
  }, 120_000);

  it('while a demo holds the store: leaves it alone and says so', async () => {
    // a live process of this host holds the lock: this test's own
    await writeFile(
      join(dataDir, DATA_DIR_LOCK_FILE),
      JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() }),
    );
    try {
      const result = await runCli(['doctor'], { DATA_DIR: dataDir });
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(
        new RegExp(`^ok\\s+database\\s+embedded PGlite under .*, in use by the running demo \\(process ${process.pid}\\): not opened`, 'm'),
      );
    } finally {
      await rm(join(dataDir, DATA_DIR_LOCK_FILE), { force: true });
    }
  }, 120_000);
});
