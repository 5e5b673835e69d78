import { metricValue } from './health.js';
import type { WorkerProcess } from './worker.js';

export interface WorkerReading {
  leader: boolean;
  pages: number;
  /** checkpoint version the worker last read or committed */
  version: number;
}

/** Checkpoint versions one worker committed between two readings. */
interface CommittedRange {
  label: string;
  from: number;
  to: number;
}

/**
 * Scrapes every worker's /metrics (each in its own loop) and checks that no two workers ever
 * committed interleaved checkpoint versions: each commit adds 1 to the version,
 * so a worker whose page count grew by n up to version v committed v-n+1..v, and
 * those ranges must be disjoint across workers. (Comparing rounds alone would
 * flag a clean handover inside one round, and a frozen worker's last pre-freeze
 * commit that is only counted after SIGCONT.) A frozen or dead worker simply
 * gives no reading; if it ever reports again, its growth meanwhile is checked too.
 */
export class FleetMonitor {
  readonly violations: string[] = [];
  private readonly ranges: CommittedRange[] = [];
  private readonly last = new Map<string, WorkerReading>();
  private readonly latest = new Map<string, { reading: WorkerReading; at: number }>();
  private running: Promise<void> | undefined;
  private stopping = false;
  /** readings taken, over all workers (named in a violation) */
  rounds = 0;

  constructor(private readonly workers: readonly WorkerProcess[]) {}

  /**
   * Scrapes each worker in a loop of its own: a frozen worker's scrape waits out its timeout without
   * delaying the readings of the others (one shared round took 650 ms while a worker was stopped, and
   * the new leader's takeover was seen that much later).
   */
  start(intervalMs = 150): void {
    this.running = Promise.all(
      this.workers.map(async (worker) => {
        while (!this.stopping) {
          await this.scrape(worker);
          await new Promise((resolve) => setTimeout(resolve, intervalMs));
        }
      }),
    ).then(() => {});
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
  }

  /** The most recent reading of a worker taken at or after `since` (Date.now()), if any. */
  readingSince(worker: WorkerProcess, since: number): WorkerReading | undefined {
    const entry = this.latest.get(worker.label);
    return entry && entry.at >= since ? entry.reading : undefined;
  }

  /** The checkpoint versions a worker was seen to commit, as ranges in the order seen. */
  committedBy(worker: WorkerProcess): Array<{ from: number; to: number }> {
    return this.ranges.filter((r) => r.label === worker.label).map(({ from, to }) => ({ from, to }));
  }

  /** Each worker's latest reading and its age (for failure messages). */
  describeLatest(): string {
    const now = Date.now();
    return this.workers
      .map((w) => {
        const entry = this.latest.get(w.label);
        if (!entry) return `${w.label}: no reading`;
        const { leader, pages, version } = entry.reading;
        return `${w.label}: leader=${leader} pages=${pages} version=${version} (${now - entry.at} ms ago)`;
      })
      .join('; ');
  }

  private async scrape(worker: WorkerProcess): Promise<void> {
    if (!worker.child.isRunning()) return;
    let reading: WorkerReading;
    try {
      const started = Date.now();
      const body = (await worker.health('/metrics', 500)).body;
      reading = {
        leader: metricValue(body, 'intake_sync_leader') === 1,
        pages: metricValue(body, 'intake_sync_pages_total') ?? 0,
        version: metricValue(body, 'intake_sync_checkpoint_version') ?? 0,
      };
      this.latest.set(worker.label, { reading, at: started });
    } catch {
      return; // frozen (SIGSTOP) or gone
    }
    this.rounds++;
    const before = this.last.get(worker.label);
    this.last.set(worker.label, reading);
    if (!before || reading.pages <= before.pages) return;
    const range = { label: worker.label, from: reading.version - (reading.pages - before.pages) + 1, to: reading.version };
    for (const other of this.ranges) {
      if (other.label !== range.label && other.from <= range.to && range.from <= other.to) {
        this.violations.push(
          `reading ${this.rounds}: ${range.label} committed versions ${range.from}-${range.to}, overlapping ${other.label}'s ${other.from}-${other.to}`,
        );
      }
    }
    this.ranges.push(range);
  }
}
