import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../../config/config.js';
import { lockDataDir } from '../../../db/data-dir-lock.js';
import { DataDirLockedError } from '../../../db/errors/data-dir-locked-error.js';
import { openDatabase } from '../../../db/connection.js';
import { checkSchema, type CheckResult } from './checks.js';
import { intakeClientFor } from '../../../config/intake-client.js';

function message(error: unknown): string {
  return error instanceof Error ? error.message.replace(/\n\s*/g, ' ') : String(error);
}

/**
 * `doctor` when nothing is configured: the demo's own setup, checked as the demo would use it. The
 * embedded store under DATA_DIR (left alone while a running demo holds it: PGlite serves one
 * process), and the built-in simulator, started on a loopback port and asked for one page with its
 * own credentials, then stopped. Nothing is written to the store.
 */
export async function runDemoChecks(config: Config): Promise<CheckResult[]> {
  const checks: CheckResult[] = [
    {
      check: 'configuration',
      ok: true,
      detail:
        `the demo: nothing is configured, so \`run\` starts embedded PGlite under ${config.DATA_DIR} and the built-in simulator ` +
        `(SANDBOX: nothing here is a pharmacy), sped up ${config.SANDBOX_TIME_SCALE}x; set INTAKE_API_BASE_URL and DATABASE_URL for a deployment`,
    },
  ];
  checks.push(await checkDemoStore(config));
  checks.push(await checkBuiltInSimulator(config));
  return checks;
}

async function checkDemoStore(config: Config): Promise<CheckResult> {
  const dir = join(config.DATA_DIR, 'pglite');
  if (!existsSync(dir)) {
    return { check: 'database', ok: true, detail: `no embedded store under ${dir} yet: \`npm start\` (or \`intake-sync run\`) creates it` };
  }
  let release: () => void;
  try {
    release = lockDataDir(config.DATA_DIR).release;
  } catch (error) {
    if (error instanceof DataDirLockedError) {
      return {
        check: 'database',
        ok: true,
        detail: `embedded PGlite under ${dir}, in use by the running demo (process ${error.pid}): not opened`,
      };
    }
    return { check: 'database', ok: false, detail: message(error) };
  }
  try {
    const database = await openDatabase({ dataDir: dir, schema: config.DATABASE_SCHEMA });
    try {
      const schema = await checkSchema(database);
      return { ...schema, check: 'database', detail: `embedded PGlite under ${dir}: ${schema.detail}` };
    } finally {
      await database.close().catch(() => {});
    }
  } catch (error) {
    return { check: 'database', ok: false, detail: `embedded PGlite under ${dir}: ${message(error)}` };
  } finally {
    release();
  }
}

async function checkBuiltInSimulator(config: Config): Promise<CheckResult> {
  const check = 'simulator';
  // loaded only here: a deployment's doctor never loads the simulator
  const [{ startSandbox }, { scaledClock }] = await Promise.all([
    import('../../../sandbox/server.js'),
    import('../../../sandbox/clock.js'),
  ]);
  let sandbox: Awaited<ReturnType<typeof startSandbox>> | undefined;
  try {
    sandbox = await startSandbox({ host: '127.0.0.1', port: 0, clock: scaledClock(config.SANDBOX_TIME_SCALE) });
    const credential = sandbox.credentials[0];
    if (!credential) return { check, ok: false, detail: 'the built-in simulator started without a credential' };
    const client = intakeClientFor(
      config,
      { baseUrl: sandbox.baseUrl, apiKey: credential.key, apiSecret: credential.secret },
      { retry: { retries: 0 } },
    );
    await client.listEvents({ limit: 1 });
    return {
      check,
      ok: true,
      detail: 'the built-in simulator starts on a loopback port and answers GET /events with its credentials (SANDBOX)',
    };
  } catch (error) {
    return { check, ok: false, detail: `the built-in simulator: ${message(error)}` };
  } finally {
    await sandbox?.close().catch(() => {});
  }
}
