import type { Logger } from '../../log/log.js';
import { summarizeFailure } from '../state/failure-summary.js';
import { deliverRow, type OutboxDeliveryDeps } from './delivery.js';
import { dueRows } from './store.js';
import type { LoopSleep } from '../../lib/loop-sleep.js';
import { StoppableLoop } from '../../lib/stoppable-loop.js';

export interface OutboxLoopDeps {
  delivery: OutboxDeliveryDeps;
  sleep: LoopSleep;
  /** the wait when nothing is due (the poll interval) */
  idleMs: number;
  /** the longest wait after repeated cycle failures (database away) */
  maxBackoffMs: number;
  /** rows of distinct external_ids in flight at once */
  concurrency: number;
  /** rows read per cycle */
  batchSize: number;
  log: Logger;
}

/**
 * The leader's outbox delivery: reads the due head-of-line rows, delivers them a few at a time,
 * waits a poll interval when nothing is due. It runs beside the feed poller (its own awaits, its
 * own requests), so a slow operator answer never holds a page. stop() aborts the requests in
 * flight and the wait: an aborted row stays in doubt and the next leader reconciles it.
 */
export class OutboxLoop extends StoppableLoop {
  constructor(private readonly deps: OutboxLoopDeps) {
    super();
  }

  protected async loop(): Promise<void> {
    const { log } = this.deps;
    let failures = 0;
    while (!this.stopping) {
      let delivered = 0;
      try {
        delivered = await this.cycle();
        failures = 0;
      } catch (error) {
        failures++;
        log.warn({ error: summarizeFailure(error), failures }, 'outbox cycle failed; retrying');
      }
      if (this.stopping) break;
      if (delivered > 0) continue;
      // never hot: an empty or failing cycle waits; failures back off up to the cap
      const wait = failures === 0 ? this.deps.idleMs : Math.min(this.deps.maxBackoffMs, this.deps.idleMs * 2 ** Math.min(failures, 10));
      await this.deps.sleep(wait, this.stopSignal.signal);
    }
  }

  /** One pass over the due rows; returns how many it attempted. */
  private async cycle(): Promise<number> {
    const rows = await dueRows(this.deps.delivery.db, this.deps.delivery.feed, this.deps.batchSize);
    let next = 0;
    let errors = 0;
    let lastError: unknown;
    const lane = async () => {
      while (!this.stopping) {
        const row = rows[next++];
        if (!row) return;
        try {
          await deliverRow(this.deps.delivery, row, this.stopSignal.signal);
        } catch (error) {
          // a database error around one row: it stays pending (in doubt) and is retried
          errors++;
          lastError = error;
          this.deps.log.warn(
            { outbox_id: row.id, external_id: row.externalId, error: summarizeFailure(error) },
            'outbox row could not be recorded',
          );
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.deps.concurrency, rows.length) }, lane));
    // every row failing is the database, not the rows: back off instead of trying again at once
    if (rows.length > 0 && errors === rows.length) throw lastError;
    return rows.length;
  }
}
