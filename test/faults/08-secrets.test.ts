import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { postgresReachable } from '../support/db.js';
import { REPO_ROOT } from '../support/faults/cli-process.js';
import { finalStageUser, isRootUser } from '../support/faults/dockerfile.js';
import { expectNoLeaks, secretNeedles } from '../support/faults/leaks.js';
import { TRANSPORT_CALM } from '../support/faults/sandbox-admin.js';
import { openScenario } from '../support/faults/scenario-kit.js';
import { recordSkip, runScenario } from '../support/faults/trials.js';
import { waitFor } from '../support/wait-for.js';
import { runCommand, runOnce, startWorker, stopWorker, waitUntilLive } from '../support/faults/worker.js';

const SCENARIO = '8. secrets stay out of output; plain http to a remote host refused; image runs as non-root';

const available = await postgresReachable();

/** This machine's first non-loopback IPv4 address: "remote" as far as the worker can tell. */
function nonLoopbackAddress(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

describe.skipIf(!available)(SCENARIO, () => {
  test('secrets never appear; http:// to a non-loopback host is refused before any connection; non-root image', async () => {
    await runScenario(SCENARIO, async (trial) => {
      const kit = await openScenario('secrets');
      let trials = 0;
      try {
        await kit.sandbox.admin.seed({ count: 300, prefix: 'sc' });
        const db = await kit.database('main');

        // 1. plain http to a remote host: refused fast, naming the variable, with no connection made
        let connections = 0;
        const listener = createServer((socket) => {
          connections++;
          socket.destroy();
        });
        await new Promise<void>((resolve) => listener.listen(0, '0.0.0.0', resolve));
        const port = (listener.address() as { port: number }).port;
        const remote = nonLoopbackAddress();
        const insecureUrls = [
          `http://example.invalid/intake_api/2024-12-10`,
          ...(remote ? [`http://${remote}:${port}/intake_api/2024-12-10`] : []),
        ];
        try {
          for (const url of insecureUrls) {
            for (const args of [['run', '--once'], ['run'], ['events', 'list']]) {
              const result = await runCommand(kit.setup(db, { INTAKE_API_BASE_URL: url }), args, 20_000);
              trials++;
              expect(result.code, `${args.join(' ')} with ${url} must fail`).not.toBe(0);
              expect(result.stderr).toMatch(/INTAKE_API_BASE_URL|base URL/);
              expect(result.stderr).toMatch(/https/i);
              expect(result.stderr, 'refused before any lookup').not.toMatch(/ENOTFOUND|EAI_AGAIN|ECONNREFUSED/);
              expect(result.durationMs).toBeLessThan(10_000);
            }
          }
        } finally {
          listener.close();
        }
        expect(connections, 'connections made to the refused http:// host').toBe(0);

        // 2. a wrong secret: 401s at debug level; neither it nor its bearer token is printed
        const wrongSecret = `wrong-${kit.sandbox.secret.slice(-12)}-zz`;
        kit.addNeedles(secretNeedles(kit.sandbox.key, wrongSecret));
        const refused = await startWorker({ ...kit.setup(db), api: { ...kit.sandbox, secret: wrongSecret } });
        await waitUntilLive(refused);
        await waitFor(
          async () => {
            const ready = await refused.health('/readyz');
            return ready.status === 503 && /401|unauthori[sz]ed|credential/i.test(ready.body);
          },
          { what: 'readyz to report the refused credential', timeoutMs: 30_000, intervalMs: 200, probeErrors: 'retry' },
        );
        await refused.health('/metrics');
        await stopWorker(refused);
        trials++;

        // 3. a good secret through 5xx and resets (error paths log request details)
        await kit.sandbox.admin.setFaults({ ...TRANSPORT_CALM, errorRate: 0.3, dropRate: 0.1, retryAfterSeconds: 0 });
        const drained = await runOnce(kit.setup(db), 120_000);
        expect(drained.code, drained.stderr.slice(-1000)).toBe(0);
        trials++;
        await kit.sandbox.admin.setFaults(TRANSPORT_CALM);
        for (const args of [
          ['events', 'list', '--limit', '2'],
          ['status', '--json'],
        ]) {
          const result = await runCommand(kit.setup(db), args);
          expect(result.code, result.stderr).toBe(0);
          kit.capture.add(`cli-${args.join('-')}:stdout`, 'health', result.stdout);
          trials++;
        }

        // 4. a database password is a secret too: a failed connection must not print it
        const dbPassword = `dbpw-${kit.sandbox.secret.slice(-10)}`;
        kit.addNeedles([{ label: 'database password', value: dbPassword }]);
        const noDb = await runOnce({ ...kit.setup(db), databaseUrl: `postgres://postgres:${dbPassword}@127.0.0.1:1/nowhere` }, 60_000);
        expect(noDb.code).not.toBe(0);
        trials++;

        trial.set({
          trials,
          note: `${insecureUrls.length} refused URLs x 3 commands, 401 run, faulty drain, CLI reports, bad DB URL, Dockerfile`,
        });
        expectNoLeaks(kit.capture, kit.needles());

        // 5. the image runs as a non-root user (static check of the final stage)
        const dockerfile = join(REPO_ROOT, 'Dockerfile');
        expect(existsSync(dockerfile), 'Dockerfile at the repository root').toBe(true);
        const user = finalStageUser(readFileSync(dockerfile, 'utf8'));
        expect(user, 'USER in the final stage').toBeDefined();
        expect(isRootUser(user ?? 'root'), `final stage USER ${user}`).toBe(false);
      } finally {
        await kit.close();
      }
    });
  });
});

if (!available) recordSkip(SCENARIO, 'no PostgreSQL at 127.0.0.1:5432');
