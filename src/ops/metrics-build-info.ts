import { Gauge, type Registry } from 'prom-client';
import { VERSION } from '../version.js';

/**
 * intake_sync_build_info{feed,version}: always 1, the version in a label (the Prometheus
 * convention), so a dashboard shows which build each replica runs and an alert can join on it
 * during a rollout. One series per feed: every intake_sync_* series carries the feed label.
 */
export function registerBuildInfo(registry: Registry, feeds: ReadonlyArray<{ feed: string }>): void {
  const info = new Gauge({
    name: 'intake_sync_build_info',
    help: 'Always 1; the running build in the version label',
    labelNames: ['feed', 'version'],
    registers: [registry],
  });
  for (const { feed } of feeds) info.set({ feed, version: VERSION }, 1);
}
