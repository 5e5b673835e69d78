import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAEMON_NODE_FLAGS } from '../../src/daemon/daemon-node-flags.js';
import { ManualClock } from '../../src/sandbox/clock.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import { spawnCli, stopProcesses, type WorkerProcess } from '../support/process/worker-process.js';

const hasPostgres = await postgresReachable();
// module.registerHooks (Node.js >= 22.15): records every module the child loads, in its own thread
const canRecord = typeof (nodeModule as { registerHooks?: unknown }).registerHooks === 'function';

/** A preload that writes the process's V8/Node flags, then the URL of every module the process loaded to MODULES_OUT when it exits. */
const RECORDER = `import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';
const loaded = new Set();
registerHooks({ load(url, context, next) { loaded.add(url); return next(url, context); } });
process.on('exit', () => writeFileSync(process.env.MODULES_OUT, [process.execArgv.join(' '), ...loaded].join('\\n')));
`;

/** What only the demo (embedded PGlite, the built-in simulator) or the `sandbox` command needs. */
const DEMO_ONLY = [
  /@electric-sql\/pglite/,
  /drizzle-orm\/pglite/,
  /\/src\/sandbox\/server\./,
  /\/src\/sandbox\/store\./,
  /\/src\/daemon\/embedded-demo\./,
];

/** The OpenTelemetry SDK and its exporters: loaded only when OTEL_* asks for a signal (src/telemetry/start.ts). */
const TRACING_ONLY = [/@opentelemetry\/sdk-/, /@opentelemetry\/exporter-/, /@opentelemetry\/otlp-/, /\/src\/telemetry\/sdk\./];

/**
 * A production `run` (Postgres and an operator URL) loads none of the demo's modules: they cost resident
 * memory for the daemon's whole life (docs/performance.md, idle memory). Also checks the relaunch with the
 * daemon's V8 flags (daemon-node-flags.ts) keeps the process's own flags and environment.
 */
describe.skipIf(!hasPostgres || !canRecord)(`a production run loads no demo module (${NEEDS_POSTGRES}; Node.js >= 22.15)`, () => {
  let test: TestDatabase;
  let sandbox: Sandbox;
  let dir: string;
  const children: WorkerProcess[] = [];

  beforeAll(async () => {
    test = await createTestDatabase('production_modules');
    sandbox = await startSandbox({ clock: new ManualClock() });
    sandbox.store.seedBulk({ count: 3, rejectEvery: 0, prefix: 'mods' });
    dir = mkdtempSync(join(tmpdir(), 'run-modules-'));
    writeFileSync(join(dir, 'recorder.mjs'), RECORDER);
  });
  afterAll(async () => {
    await stopProcesses(children);
    await sandbox?.close();
    await test?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('run --once against Postgres and an operator URL: no PGlite, no simulator, no demo wiring', async () => {
    const [credential] = sandbox.credentials;
    const out = join(dir, 'modules.txt');
    const run = spawnCli(['run', '--once'], {
      NODE_OPTIONS: `--import ${pathToFileURL(join(dir, 'recorder.mjs')).href}`,
      MODULES_OUT: out,
      DATABASE_URL: test.url ?? '',
      INTAKE_API_BASE_URL: sandbox.baseUrl,
      INTAKE_API_KEY: credential?.key ?? '',
      INTAKE_API_SECRET: credential?.secret ?? '',
      HEALTH_PORT: '0',
    });
    children.push(run);
    expect(await run.exited).toBe(0);
    const [execArgv, ...loaded] = readFileSync(out, 'utf8').split('\n');
    // started without them, `run` relaunched itself with the daemon's V8 flags, keeping its own
    expect(execArgv?.split(' ')).toEqual(expect.arrayContaining(['--import', 'tsx', ...DAEMON_NODE_FLAGS]));
    // the recorder saw the daemon's own modules: it ran in the process that did the work
    expect(loaded.some((url) => /\/src\/sync\/poll\/poller\./.test(url))).toBe(true);
    expect(loaded.filter((url) => DEMO_ONLY.some((pattern) => pattern.test(url)))).toEqual([]);
    // no OTEL_* set: not one module of the OpenTelemetry SDK (issue 38: unset, tracing costs nothing)
    expect(loaded.filter((url) => TRACING_ONLY.some((pattern) => pattern.test(url)))).toEqual([]);
    // two tsx starts (the relaunch) on a loaded 2-core machine
  }, 120_000);
});
