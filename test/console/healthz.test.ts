import { afterEach, describe, expect, it } from 'vitest';
import type { ConsoleDeps } from '../../src/console/context.js';
import { type RunningConsole, startConsole } from '../../src/console/server.js';

/** Deps whose every use except the shutdown sweep fails the test: /healthz must touch none of them. */
function untouchableDeps(): { deps: ConsoleDeps; touched: string[] } {
  const touched: string[] = [];
  const trap = (name: string): object =>
    new Proxy(
      {},
      {
        get(_target, property) {
          if (name === 'store' && property === 'endAll') return async () => {};
          touched.push(`${name}.${String(property)}`);
          return () => {
            throw new Error(`${name}.${String(property)} used`);
          };
        },
      },
    );
  const deps = new Proxy({} as ConsoleDeps, {
    get(_target, property) {
      // the password sign-in mode: no SSO settings (test/console/sso.test.ts has the other)
      if (property === 'sso') return undefined;
      return trap(String(property));
    },
  });
  return { deps, touched };
}

describe('console GET /healthz', () => {
  let running: RunningConsole | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  it('answers 200 ok over a real socket without a session or the database', async () => {
    const { deps, touched } = untouchableDeps();
    running = await startConsole(deps, '127.0.0.1', 0);
    const response = await fetch(`${running.url}/healthz`, { redirect: 'manual' });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ok');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(touched).toEqual([]);
  });

  it('still sends every other path to sign-in (only /healthz is open)', async () => {
    const { deps, touched } = untouchableDeps();
    running = await startConsole(deps, '127.0.0.1', 0);
    const response = await fetch(`${running.url}/healthz/x`, { redirect: 'manual' });
    expect(response.status).not.toBe(200);
    expect(touched).toContain('store.use');
  });
});
