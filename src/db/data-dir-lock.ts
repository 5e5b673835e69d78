import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { DataDirLockedError } from './errors/data-dir-locked-error.js';

/** The lock file beside PGlite's files, holding the owner's pid and host. */
export const DATA_DIR_LOCK_FILE = 'intake-sync.lock';

interface LockContent {
  pid: number;
  host: string;
  since: string;
}

export interface DataDirLock {
  /** removes the lock file if it is still ours; idempotent */
  release(): void;
}

/** Whether a process with this pid exists on this machine (EPERM: it does, owned by someone else). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === 'EPERM';
  }
}

function readLock(path: string): LockContent | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockContent>;
    if (typeof parsed.pid === 'number' && Number.isInteger(parsed.pid) && typeof parsed.host === 'string') {
      return { pid: parsed.pid, host: parsed.host, since: String(parsed.since ?? '') };
    }
  } catch {
    // unreadable or half-written: treated as stale below
  }
  return undefined;
}

/**
 * Takes the embedded store's lock in `dir` (which must exist) for this process, or throws
 * DataDirLockedError naming the live holder's pid. A lock left by a dead process (kill -9, a
 * crash) on this host is taken over. The file is created exclusively, so of two processes starting
 * at once exactly one gets it; a stale file is first renamed away (one rename wins) before the
 * retry. Released on release() and, as a last resort, when this process exits.
 */
export function lockDataDir(dir: string, alive: (pid: number) => boolean = processAlive): DataDirLock {
  const path = join(dir, DATA_DIR_LOCK_FILE);
  const mine: LockContent = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(path, JSON.stringify(mine), { flag: 'wx', mode: 0o600 });
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        process.off('exit', release);
        // only our own file: a takeover after we were presumed dead must not lose its lock
        if (readLock(path)?.pid === mine.pid) {
          try {
            unlinkSync(path);
          } catch {
            // already gone
          }
        }
      };
      process.on('exit', release);
      return { release };
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
    }
    const holder = readLock(path);
    // another host's pid cannot be checked from here: it counts as live
    if (holder && holder.pid !== process.pid && (holder.host !== mine.host || alive(holder.pid))) {
      throw new DataDirLockedError(dir, holder.pid, holder.host);
    }
    try {
      renameSync(path, `${path}.stale-${process.pid}`);
      unlinkSync(`${path}.stale-${process.pid}`);
    } catch {
      // another process took it over first: the next attempt sees its lock
    }
  }
  throw new DataDirLockedError(dir, readLock(path)?.pid ?? -1, readLock(path)?.host ?? 'unknown');
}
