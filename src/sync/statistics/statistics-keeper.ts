import { inSpan, setAttributes } from '../../telemetry/spans.js';
import type { Db } from '../../db/connection.js';
import { namesOf } from '../../db/store-names.js';
import type { LoopSleep } from '../../lib/loop-sleep.js';
import { StoppableLoop } from '../../lib/stoppable-loop.js';
import type { Logger } from '../../log/log.js';
import { summarizeFailure } from '../state/failure-summary.js';
import { nextStatisticsDelay, tablesDue } from './decisions.js';
import type { SharedStatisticsPasses } from './shared-passes.js';
import { analyzeTable, readTableActivity } from './table-activity.js';

/** How often the statistics task looks at the tables. */
export interface StatisticsSettings {
  /** from the end of one pass to the start of the next */
  intervalMs: number;
  /** a new leader's first pass waits this long */
  startDelayMs: number;
}

/** Every minute, the first 10 s after taking the lead: a drain's burst is analyzed within about a minute. */
export const STATISTICS_DEFAULTS: StatisticsSettings = { intervalMs: 60_000, startDelayMs: 10_000 };

/** One table analyzed: what the log line, the metrics and the tests see. */
export interface TableAnalyzed {
  table: string;
  rowsChanged: number;
  durationMs: number;
}

export interface StatisticsKeeperDeps {
  db: Db;
  settings: StatisticsSettings;
  clock: { now(): number };
  sleep: LoopSleep;
  log: Logger;
  /** after each ANALYZE: the metrics */
  onAnalyzed?: ((analyzed: TableAnalyzed) => void) | undefined;
  /** the process's one pass at a time for all its feed leaders (shared-passes.ts); none: this keeper's own passes */
  shared?: SharedStatisticsPasses | undefined;
}

const RETRY_MS = 5_000;

/**
 * The statistics task: a leader task (beside the retention cleaner) that runs ANALYZE on the
 * schema's tables whose rows changed since their last ANALYZE passed autovacuum's threshold, read
 * from the server's settings. A server with autovacuum off, or behind after a burst, would otherwise
 * plan the page statement, registration and rematch for tables of a few rows (issue 26). Each
 * ANALYZE is its own statement (ShareUpdateExclusiveLock: page applies go on beside it); a second
 * feed's leader doing the same finds the tables analyzed and does nothing.
 */
export class StatisticsKeeper extends StoppableLoop {
  constructor(private readonly deps: StatisticsKeeperDeps) {
    super();
  }

  /** One pass now: the tables analyzed, most changed first; stops between tables when asked to. */
  passOnce(): Promise<TableAnalyzed[]> {
    return inSpan('intake_sync.leader statistics', { root: true, attributes: { 'intake_sync.task': 'statistics' } }, async (span) => {
      const shared = this.deps.shared;
      const ran = shared ? await shared.run(() => this.pass()) : await this.pass();
      const analyzed = ran ?? [];
      // as the retention span says it: a stop between tables leaves the rest for the next leader's pass;
      // skipped: another leader of this process runs the pass, or ran it within the interval
      setAttributes(span, {
        'intake_sync.task.outcome': ran === undefined ? 'skipped' : this.stopping ? 'partial' : 'complete',
        'intake_sync.statistics.tables_analyzed': analyzed.length,
      });
      return analyzed;
    });
  }

  private async pass(): Promise<TableAnalyzed[]> {
    const { db, clock } = this.deps;
    const names = namesOf(db);
    const { tables, threshold } = await readTableActivity(db, names);
    const analyzed: TableAnalyzed[] = [];
    for (const due of tablesDue(tables, threshold)) {
      if (this.stopping) break;
      const started = clock.now();
      await analyzeTable(db, names, due.table);
      const done = { table: due.table, rowsChanged: due.rowsChanged, durationMs: clock.now() - started };
      analyzed.push(done);
      this.deps.log.info(done, 'table analyzed');
      this.deps.onAnalyzed?.(done);
    }
    return analyzed;
  }

  protected async loop(): Promise<void> {
    const { log, settings } = this.deps;
    let passes = 0;
    let failures = 0;
    while (!this.stopping) {
      await this.deps.sleep(
        nextStatisticsDelay({ passes, failures }, settings.intervalMs, settings.startDelayMs, RETRY_MS),
        this.stopSignal.signal,
      );
      if (this.stopping) break;
      try {
        await this.passOnce();
        passes += 1;
        failures = 0;
      } catch (error) {
        if (this.stopping) break;
        failures += 1;
        log.warn({ error: summarizeFailure(error), failures }, 'statistics pass failed; retrying');
      }
    }
  }
}
