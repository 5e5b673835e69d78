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
 * Scrapes every worker's /metrics in rounds and checks that no two workers ever
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
  rounds = 0;

  constructor(private readonly workers: readonly WorkerProcess[]) {}

  start(intervalMs = 150): void {
    this.running = (async () => {
      while (!this.stopping) {
        await this.round();
        await new Promise((resolve) => setTimeout(resolve, intervalMs));
      }
    })();
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

  private async round(): Promise<void> {
    const readings = await Promise.all(
      this.workers.map(async (worker) => {
        if (!worker.child.isRunning()) return undefined;
        try {
          const started = Date.now();
          const body = (await worker.health('/metrics', 500)).body;
          const reading = {
            leader: metricValue(body, 'intake_sync_leader') === 1,
            pages: metricValue(body, 'intake_sync_pages_total') ?? 0,
            version: metricValue(body, 'intake_sync_checkpoint_version') ?? 0,
          };
          this.latest.set(worker.label, { reading, at: started });
          return { label: worker.label, reading };
        } catch {
          return undefined; // frozen (SIGSTOP) or gone
        }
      }),
    );
    this.rounds++;
    for (const entry of readings) {
      if (!entry) continue;
      const before = this.last.get(entry.label);
      this.last.set(entry.label, entry.reading);
      if (!before || entry.reading.pages <= before.pages) continue;
      const range = {
        label: entry.label,
        from: entry.reading.version - (entry.reading.pages - before.pages) + 1,
        to: entry.reading.version,
      };
      for (const other of this.ranges) {
        if (other.label !== range.label && other.from <= range.to && range.from <= other.to) {
          this.violations.push(
            `round ${this.rounds}: ${range.label} committed versions ${range.from}-${range.to}, overlapping ${other.label}'s ${other.from}-${other.to}`,
          );
        }
      }
      this.ranges.push(range);
    }
  }
}
