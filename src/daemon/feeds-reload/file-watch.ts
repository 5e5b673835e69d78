import { type FSWatcher, watch } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Changes closer together than this are one change: Kubernetes writes a new ..data directory, then swaps the link. */
export const RELOAD_DEBOUNCE_MS = 500;

/**
 * Without any event (a filesystem where inotify sees nothing: NFS, some overlay mounts) the files
 * are still read this often; a read that finds the same content does nothing.
 */
export const RELOAD_FALLBACK_CHECK_MS = 30_000;

/** The directories to watch for these files: a mounted ConfigMap or Secret changes by a symlink swap in its directory. Pure. */
export function watchedDirectories(files: Iterable<string>): string[] {
  return [...new Set([...files].map((file) => dirname(resolve(file))))].sort();
}

/**
 * Watches the directories of FEEDS_FILE and of the secret files it names, and calls `changed`
 * once per burst of events (debounced), and every RELOAD_FALLBACK_CHECK_MS anyway. `watch` changes
 * the watched files (a reload may name other secret files). Never keeps the process alive.
 */
export class FilesWatch {
  private watchers = new Map<string, FSWatcher>();
  private debounce: NodeJS.Timeout | undefined;
  private readonly fallback: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly changed: () => void,
    private readonly timing: { debounceMs: number; fallbackMs: number } = {
      debounceMs: RELOAD_DEBOUNCE_MS,
      fallbackMs: RELOAD_FALLBACK_CHECK_MS,
    },
  ) {
    this.fallback = setInterval(() => this.changed(), timing.fallbackMs);
    this.fallback.unref();
  }

  /** Watches exactly the directories of `files` from now on. */
  watch(files: Iterable<string>): void {
    if (this.closed) return;
    const wanted = new Set(watchedDirectories(files));
    for (const [dir, watcher] of this.watchers) {
      if (wanted.has(dir)) continue;
      watcher.close();
      this.watchers.delete(dir);
    }
    for (const dir of wanted) {
      if (this.watchers.has(dir)) continue;
      try {
        const watcher = watch(dir, { persistent: false }, () => this.soon());
        // a directory removed or unreadable: the fallback check still reads the files
        watcher.on('error', () => {
          watcher.close();
          this.watchers.delete(dir);
        });
        this.watchers.set(dir, watcher);
      } catch {
        // cannot watch (gone, no permission, no inotify): the fallback check covers it
      }
    }
  }

  close(): void {
    this.closed = true;
    clearInterval(this.fallback);
    clearTimeout(this.debounce);
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }

  private soon(): void {
    if (this.closed) return;
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => this.changed(), this.timing.debounceMs);
    this.debounce.unref();
  }
}
