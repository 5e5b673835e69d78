import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DATA_DIR_LOCK_FILE, lockDataDir } from '../../src/db/data-dir-lock.js';
import { DataDirLockedError } from '../../src/db/errors/data-dir-locked-error.js';

const dirs: string[] = [];
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'lock-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('lockDataDir', () => {
  it('writes our pid, refuses a live holder naming its pid and DATABASE_URL, and releases only its own file', () => {
    const dir = freshDir();
    const lock = lockDataDir(dir);
    expect(JSON.parse(readFileSync(join(dir, DATA_DIR_LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    lock.release();
    expect(existsSync(join(dir, DATA_DIR_LOCK_FILE))).toBe(false);
    writeFileSync(join(dir, DATA_DIR_LOCK_FILE), JSON.stringify({ pid: 4242, host: hostname() }));
    const error = (() => {
      try {
        lockDataDir(dir, (pid) => pid === 4242);
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error).toBeInstanceOf(DataDirLockedError);
    expect(error?.message).toMatch(/in use by process 4242 .*DATABASE_URL/);
  });

  it("takes over a dead pid's lock, and a half-written one", () => {
    const dir = freshDir();
    writeFileSync(join(dir, DATA_DIR_LOCK_FILE), JSON.stringify({ pid: 4242, host: hostname() }));
    lockDataDir(dir, () => false).release();
    writeFileSync(join(dir, DATA_DIR_LOCK_FILE), '{"pid":');
    const lock = lockDataDir(dir, () => true);
    expect(JSON.parse(readFileSync(join(dir, DATA_DIR_LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    lock.release();
  });

  it("another host's lock counts as live (its pid cannot be checked here)", () => {
    const dir = freshDir();
    writeFileSync(join(dir, DATA_DIR_LOCK_FILE), JSON.stringify({ pid: 4242, host: 'elsewhere' }));
    expect(() => lockDataDir(dir, () => false)).toThrow(/process 4242 on elsewhere/);
  });
});
