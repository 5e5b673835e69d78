import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../scripts/build-if-stale.mjs', import.meta.url));
const PACKAGE = fileURLToPath(new URL('../../package.json', import.meta.url));

/** A checkout in miniature: files with given mtimes (seconds), then `build-if-stale --check` in it. */
function check(files: Record<string, number>): { code: number | null; out: string } {
  const root = mkdtempSync(join(tmpdir(), 'prestart-'));
  roots.push(root);
  for (const [file, mtime] of Object.entries(files)) {
    mkdirSync(join(root, file, '..'), { recursive: true });
    writeFileSync(join(root, file), '');
    utimesSync(join(root, file), mtime, mtime);
  }
  const result = spawnSync(process.execPath, [SCRIPT, '--check'], { cwd: root, encoding: 'utf8' });
  return { code: result.status, out: result.stdout.trim() };
}
const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe('npm start builds only when dist/ is stale', () => {
  it('prestart runs the check, not an unconditional build', () => {
    const pkg = JSON.parse(readFileSync(PACKAGE, 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.prestart).toBe('node scripts/build-if-stale.mjs');
  });

  it.each([
    ['a fresh clone without dist/ builds', { 'src/a.ts': 1_000, 'tsconfig.json': 1_000 }, 1, 'stale: dist/cli/main.js is missing'],
    [
      'dist/ newer than every source: no build',
      { 'src/a.ts': 1_000, 'src/x/b.ts': 1_500, 'tsconfig.json': 900, 'dist/cli/main.js': 2_000 },
      0,
      'fresh',
    ],
    [
      'an edited source file builds',
      { 'src/a.ts': 1_000, 'src/x/b.ts': 3_000, 'dist/cli/main.js': 2_000 },
      1,
      'stale: src/x/b.ts is newer than dist/',
    ],
    [
      'an edited tsconfig builds',
      { 'src/a.ts': 1_000, 'tsconfig.build.json': 3_000, 'dist/cli/main.js': 2_000 },
      1,
      'stale: tsconfig.build.json is newer than dist/',
    ],
  ])('%s', (_label, files, code, out) => {
    expect(check(files)).toEqual({ code, out });
  });
});
