import type { Config } from '../../config/config.js';
import type { FeedConfig } from '../../config/feeds-file.js';
import type { Logger } from '../../log/log.js';
import type { Closers } from '../feed-workers.js';
import type { FeedFleet } from './feed-fleet.js';
import { FeedsReloader } from './feeds-reloader.js';
import { FilesWatch } from './file-watch.js';
import type { ReloadMetrics } from './reload-metrics.js';

/**
 * Reloads FEEDS_FILE when it or a secret file it names changes on disk (its directory watched: a
 * Kubernetes volume swaps a symlink); returns the reload the SIGHUP handler calls. Closed (watch
 * stopped, a reload under way finished) through `closers`.
 */
export function startFeedsReload(options: {
  config: Config;
  feedsFile: string;
  secretFiles: string[];
  initial: readonly FeedConfig[];
  fleet: FeedFleet;
  metrics: ReloadMetrics;
  log: Logger;
  clock: { now(): number };
  closers: Closers;
  onApplied(next: readonly FeedConfig[]): Promise<void>;
}): () => void {
  const { feedsFile } = options;
  let watch: FilesWatch | undefined;
  const reloader = new FeedsReloader({
    config: options.config,
    env: process.env,
    fleet: options.fleet,
    metrics: options.metrics,
    log: options.log,
    clock: options.clock,
    initial: options.initial,
    onFilesRead: (files) => watch?.watch([feedsFile, ...files]),
    onApplied: options.onApplied,
  });
  watch = new FilesWatch(() => void reloader.reload('change'));
  watch.watch([feedsFile, ...options.secretFiles]);
  options.log.info({ file: feedsFile }, 'FEEDS_FILE is re-read on SIGHUP and when it changes');
  options.closers.push({
    what: 'FEEDS_FILE reload',
    close: async () => {
      watch?.close();
      await reloader.settled();
    },
  });
  return () => void reloader.reload('signal');
}
