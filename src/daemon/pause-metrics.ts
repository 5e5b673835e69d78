import { Gauge, type Registry } from 'prom-client';
import type { FeedPauseBoard } from '../sync/leadership/feed-pauses.js';

/**
 * intake_sync_feed_paused{feed, reason}: 1 while the feed is paused (`feeds pause`), with the
 * reason code; 0 (reason "") otherwise. Read from the process's pause board at scrape time; the
 * alert rules silence a paused feed's lag alerts with it (deploy/prometheus/alerts.yaml).
 */
export function registerPauseMetric(registry: Registry, pauses: FeedPauseBoard, feeds: () => readonly string[]): void {
  const gauge = new Gauge({
    name: 'intake_sync_feed_paused',
    help: '1 while the feed is paused (intake-sync feeds pause), labelled with the reason code; its lag alerts are silenced',
    labelNames: ['feed', 'reason'],
    registers: [],
    collect() {
      this.reset();
      const known = pauses.known();
      for (const feed of feeds()) {
        const pause = known.get(feed);
        this.set({ feed, reason: pause?.reason ?? '' }, pause ? 1 : 0);
      }
    },
  });
  registry.registerMetric(gauge);
}
