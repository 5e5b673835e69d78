import { Counter, Gauge, type Registry } from 'prom-client';
import { withDeadline } from '../db/deadline.js';
import { QUARANTINE_REASONS, type QuarantineReason } from '../store-api/triage/vocabulary.js';

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
/** One feed's database-backed sources. */
export interface ProvidedSources {
  feed: string;
  quarantine?: QuarantineSource | undefined;
  outbox?: OutboxSource | undefined;
}

export function registerProvidedGauges(registers: Registry[], feeds: readonly ProvidedSources[]): void {
  // reads of this scrape: the error counter waits for them, so a miss shows in the same scrape
  const inFlight = new Set<Promise<unknown>>();
  const read = <T>(feed: string, source: 'quarantine' | 'outbox', get: () => Promise<T>): Promise<T | undefined> => {
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
      // the feeds are read side by side: a scrape waits for the slowest, not their sum
      await Promise.all(
        feeds.map(async ({ feed, quarantine }) => {
          if (!quarantine) return;
          const counts = await read(feed, 'quarantine', quarantine);
          if (counts) for (const reason of QUARANTINE_REASONS) this.set({ feed, reason }, counts[reason]);
        }),
      );
    },
  });

  // both outbox gauges are collected in the same scrape: one read per feed serves the two
  const outboxReads = new Map<string, Promise<{ pending: number; oldestAgeSeconds: number } | undefined>>();
  const readOutbox = (sources: ProvidedSources) => {
    const { feed, outbox } = sources;
    if (!outbox) return Promise.resolve(undefined);
    let reading = outboxReads.get(feed);
    if (!reading) {
      reading = read(feed, 'outbox', outbox).finally(() => setTimeout(() => outboxReads.delete(feed), 250).unref());
      outboxReads.set(feed, reading);
    }
    return reading;
  };
  const outboxGauge = (name: string, help: string, value: (outbox: { pending: number; oldestAgeSeconds: number }) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['feed'],
      registers,
      async collect() {
        await Promise.all(
          feeds.map(async (sources) => {
            const outbox = await readOutbox(sources);
            if (outbox) this.set({ feed: sources.feed }, value(outbox));
          }),
        );
      },
    });
  const pending = outboxGauge('intake_sync_outbox_pending', 'Outbox rows of the feed not yet delivered', (outbox) => outbox.pending);
  const oldestAge = outboxGauge(
    'intake_sync_outbox_oldest_pending_age_seconds',
    'Age in seconds of the oldest outbox row not yet delivered (0 when none)',
    (outbox) => outbox.oldestAgeSeconds,
  );
  for (const { feed } of feeds) {
    for (const reason of QUARANTINE_REASONS) quarantineOpen.set({ feed, reason }, 0);
    pending.set({ feed }, 0);
    oldestAge.set({ feed }, 0);
  }
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
  for (const { feed } of feeds) for (const source of ['quarantine', 'outbox']) sourceErrors.inc({ feed, source }, 0);
}
