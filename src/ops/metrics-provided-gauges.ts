import { Counter, Gauge, type Registry } from 'prom-client';
import { withDeadline } from '../db/deadline.js';
import { QUARANTINE_REASONS, type QuarantineReason } from '../sync/quarantine.js';

/** Open quarantine rows of the feed, by reason. */
export type QuarantineSource = () => Promise<Record<QuarantineReason, number>>;
/** The outbox of the feed: rows pending and the age of the oldest pending one, in seconds. */
export type OutboxSource = () => Promise<{ pending: number; oldestAgeSeconds: number }>;

/**
 * A scrape must answer even when the database does not: a source gets this long, after which
 * the gauge keeps its last value and intake_sync_metrics_source_errors_total counts the miss.
 */
export const SOURCE_DEADLINE_MS = 2_000;

/**
 * Gauges whose values come from the database at scrape time, through sources the caller passes
 * in (so this file knows no table). Without a source a gauge reports 0: the series exists from
 * the start, so rules and dashboards that use it always parse and evaluate.
 */
export function registerProvidedGauges(
  registers: Registry[],
  feed: string,
  sources: { quarantine?: QuarantineSource | undefined; outbox?: OutboxSource | undefined },
): void {
  // reads of this scrape: the error counter waits for them, so a miss shows in the same scrape
  const inFlight = new Set<Promise<unknown>>();
  const read = <T>(source: 'quarantine' | 'outbox', get: () => Promise<T>): Promise<T | undefined> => {
    const reading = withDeadline(get(), SOURCE_DEADLINE_MS, `reading the ${source} gauge`).catch(() => {
      sourceErrors.inc({ feed, source });
      return undefined;
    });
    inFlight.add(reading);
    void reading.finally(() => inFlight.delete(reading));
    return reading;
  };

  const quarantineOpen = new Gauge({
    name: 'intake_sync_quarantine_open',
    help: 'Open (unresolved) quarantine entries of the feed in the database, by reason',
    labelNames: ['feed', 'reason'],
    registers,
    async collect() {
      if (!sources.quarantine) return;
      const counts = await read('quarantine', sources.quarantine);
      if (counts) for (const reason of QUARANTINE_REASONS) this.set({ feed, reason }, counts[reason]);
    },
  });
  for (const reason of QUARANTINE_REASONS) quarantineOpen.set({ feed, reason }, 0);

  // both outbox gauges are collected in the same scrape: one read serves the two
  let outboxRead: Promise<{ pending: number; oldestAgeSeconds: number } | undefined> | undefined;
  const readOutbox = () => {
    if (!sources.outbox) return Promise.resolve(undefined);
    const outbox = sources.outbox;
    outboxRead ??= read('outbox', outbox).finally(() => setTimeout(() => (outboxRead = undefined), 250).unref());
    return outboxRead;
  };
  const pending = new Gauge({
    name: 'intake_sync_outbox_pending',
    help: 'Outbox rows of the feed not yet delivered',
    labelNames: ['feed'],
    registers,
    async collect() {
      const outbox = await readOutbox();
      if (outbox) this.set({ feed }, outbox.pending);
    },
  });
  const oldestAge = new Gauge({
    name: 'intake_sync_outbox_oldest_pending_age_seconds',
    help: 'Age in seconds of the oldest outbox row not yet delivered (0 when none)',
    labelNames: ['feed'],
    registers,
    async collect() {
      const outbox = await readOutbox();
      if (outbox) this.set({ feed }, outbox.oldestAgeSeconds);
    },
  });
  pending.set({ feed }, 0);
  oldestAge.set({ feed }, 0);
  // registered after the gauges, so its collect runs after theirs have started their reads
  const sourceErrors = new Counter({
    name: 'intake_sync_metrics_source_errors_total',
    help: 'Scrapes where a database-backed gauge could not be read in time (the gauge kept its last value)',
    labelNames: ['feed', 'source'],
    registers,
    async collect() {
      await Promise.allSettled([...inFlight]);
    },
  });
  for (const source of ['quarantine', 'outbox']) sourceErrors.inc({ feed, source }, 0);
}
