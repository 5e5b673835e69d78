import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import { waitFor } from '../support/wait-for.js';
import { spawnCli, stopProcesses, type WorkerProcess } from '../support/process/worker-process.js';

const hasPostgres = await postgresReachable();

/** Every top-level key of one JSON line, duplicates kept (a nested object's keys are skipped). */
function topLevelKeys(line: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  let inString = false;
  let start = -1;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i];
    if (inString) {
      if (c === '\\') i += 1;
      else if (c === '"') {
        inString = false;
        if (depth === 1 && line[i + 1] === ':') keys.push(line.slice(start + 1, i));
      }
    } else if (c === '"') {
      inString = true;
      start = i;
    } else if (c === '{' || c === '[') depth += 1;
    else if (c === '}' || c === ']') depth -= 1;
  }
  return keys;
}

describe.skipIf(!hasPostgres)('what the daemon says about itself', () => {
  let tdb: TestDatabase;
  const children: WorkerProcess[] = [];
  beforeAll(async () => {
    tdb = await createTestDatabase('daemon_says');
  });
  afterAll(async () => {
    await stopProcesses(children);
    await tdb?.drop();
  });

  // --demo: the built-in simulator on a test database (without it, DATABASE_URL and no operator URL is refused)
  it('a start line with version, database (no password), pooler, schema level, feeds; version in /healthz and /metrics; one key per field in every line', async () => {
    const url = new URL(tdb.url ?? '');
    url.password = 'not-a-real-password';
    const daemon = spawnCli(['run', '--demo'], {
      DATABASE_URL: url.toString(),
      HEALTH_HOST: '127.0.0.1',
      HEALTH_PORT: '0',
      LOG_LEVEL: 'debug',
      POLL_INTERVAL_MS: '200',
    });
    children.push(daemon);
    let rawStderr = '';
    daemon.child.stderr?.on('data', (chunk: Buffer) => (rawStderr += chunk.toString('utf8')));
    await waitFor(() => daemon.logs().some((l) => String(l.msg).startsWith('health endpoint listening')), {
      timeoutMs: 30_000,
      what: 'the health endpoint',
    });
    const [start] = daemon.logs();
    expect(start).toMatchObject({
      level: 30,
      msg: 'intake-sync 0.2.0 starting',
      version: '0.2.0',
      node: process.versions.node,
      database: { host: '127.0.0.1:5432', database: url.pathname.slice(1), schema: 'intake_sync' },
      pooler: false,
      feeds: [{ name: 'default', operator: 'embedded sandbox' }],
      poll_interval_ms: 200,
    });
    expect(String(start?.schema_level)).toMatch(/^\d{4}_/);
    const port = Number(daemon.logs().find((l) => String(l.msg).startsWith('health endpoint listening'))?.port);
    const health = (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as Record<string, unknown>;
    expect(health.version).toBe('0.2.0');
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toContain('intake_sync_build_info{feed="default",version="0.2.0"} 1');
    // LOG_LEVEL=debug adds a line per page or poll with its timing
    await waitFor(() => daemon.logs().some((l) => l.level === 20 && typeof l.ms === 'number'), { timeoutMs: 20_000, what: 'a debug line' });

    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    expect(rawStderr).not.toContain('not-a-real-password');
    // the raw text, not the parsed objects: JSON.parse hides a duplicate key
    const lines = rawStderr.split('\n').filter((l) => l.startsWith('{'));
    expect(lines.length).toBeGreaterThan(5);
    for (const line of lines) {
      const keys = topLevelKeys(line);
      expect(
        keys.filter((k, i) => keys.indexOf(k) !== i),
        line,
      ).toEqual([]);
    }
    // the worker's and the poller's lines carry one component each (they used to carry two)
    expect(lines.some((l) => l.includes('"component":"worker"'))).toBe(true);
  }, 60_000);

  it('HEALTH_PORT in use: the error names HEALTH_PORT and the address, exit 1', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const daemon = spawnCli(['run', '--demo'], { DATABASE_URL: tdb.url ?? '', HEALTH_HOST: '127.0.0.1', HEALTH_PORT: String(port) });
      children.push(daemon);
      expect(await daemon.exited).toBe(1);
      const text = daemon
        .logs()
        .map((l) => l.raw ?? '')
        .join('\n');
      expect(text).toContain(`intake-sync: cannot listen on 127.0.0.1:${port} (HEALTH_PORT): address already in use`);
    } finally {
      blocker.close();
    }
  }, 60_000);
});

describe.skipIf(hasPostgres)('what the daemon says about itself', () => {
  it.skip(NEEDS_POSTGRES, () => {});
});
