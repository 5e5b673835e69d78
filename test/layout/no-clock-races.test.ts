import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// No unit or SQL test races the clock (issue 32 §7): a test that orders events by sleeping, or asserts
// that something took less than N ms, passes on a quiet machine and fails on a loaded CI runner.
// Order events with explicit promises or fake timers; wait on an observed state with `waitFor`
// (test/support/wait-for.ts), whose budget only a hang exhausts.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Suites of whole processes and deployments, where waiting on another process is the subject. */
const PROCESS_SUITES = ['test/process/', 'test/deploy/', 'test/faults/', 'test/package/', 'test/cli/', 'test/docs/', 'test/bench/'];

/** Each remaining timer in a unit or SQL test, with the reason it cannot race. The list may only shrink. */
const ALLOWED: Record<string, string> = {
  // a storm of backend kills at random instants is the load under test; its assertions wait on state
  'test/db/connection-setup-loss.test.ts': 'randomised storm, then assertions on settled state',
  // shows that nothing happens: a loaded machine can only make the absence more likely, never fail it
  'test/db/replaceable-client.test.ts': 'an absence check (a lazy query is not sent while unawaited)',
};

/** Upper bounds that are the subject of the test, each far above its mechanism's own time. */
const BOUNDS_ALLOWED: Record<string, string> = {
  // a lease is taken over within its TTL (1 s) or a retry interval; without the mechanism, never
  'test/sync/leadership/lease.test.ts': 'takeover within several TTLs, against a holder that would keep the lock for ever',
};

const SELF = 'test/layout/no-clock-races.test.ts';

const SLEEP = /new Promise\([^)]*\)\s*=>\s*setTimeout\(|setTimeout\(\s*\(\)\s*=>/;
const ELAPSED_UPPER_BOUND = /(performance\.now\(\)|Date\.now\(\))\s*-\s*\w+\)\.toBeLessThan\(/;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(ROOT, path)] : [];
  });
}

describe('no test races the clock', () => {
  const unitFiles = testFiles(join(ROOT, 'test')).filter(
    (path) => path !== SELF && !PROCESS_SUITES.some((suite) => path.startsWith(suite)),
  );

  it('unit and SQL tests order events without real sleeps', () => {
    expect(unitFiles.length).toBeGreaterThan(100);
    const sleeping = unitFiles.filter((path) => !(path in ALLOWED) && SLEEP.test(readFileSync(join(ROOT, path), 'utf8')));
    expect(sleeping, 'use explicit promises, fake timers or waitFor on an observed state').toEqual([]);
  });

  it('unit and SQL tests assert no wall-clock upper bound', () => {
    const bounded = unitFiles.filter(
      (path) => !(path in BOUNDS_ALLOWED) && ELAPSED_UPPER_BOUND.test(readFileSync(join(ROOT, path), 'utf8')),
    );
    expect(bounded, 'prove promptness by an operation that would otherwise never end').toEqual([]);
  });

  it('every allowed timer is still there (the list only shrinks)', () => {
    const stale = Object.keys(ALLOWED).filter((path) => !SLEEP.test(readFileSync(join(ROOT, path), 'utf8')));
    expect(stale).toEqual([]);
  });

  it('the patterns catch what they are for', () => {
    expect(SLEEP.test('await new Promise((resolve) => setTimeout(resolve, 5));')).toBe(true);
    expect(SLEEP.test('setTimeout(() => settle?.(), 50);')).toBe(true);
    expect(SLEEP.test('await vi.advanceTimersByTimeAsync(250);')).toBe(false);
    expect(ELAPSED_UPPER_BOUND.test('expect(performance.now() - started).toBeLessThan(500);')).toBe(true);
    expect(ELAPSED_UPPER_BOUND.test('expect(Date.now() - started).toBeGreaterThanOrEqual(190);')).toBe(false);
  });
});
