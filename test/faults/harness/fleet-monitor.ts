import { metricValue } from './health.js';
import type { WorkerProcess } from './worker.js';

export interface WorkerReading {
  leader: boolean;
  pages: number;
}

/**
 * Scrapes every worker's /metrics in rounds and checks that at most one of
 * them commits pages between two rounds (`intake_sync_pages_total` grows for
 * one worker only). A frozen or dead worker simply gives no reading; if it ever
 * reports again, any growth it accumulated meanwhile is counted too.
 */
export class FleetMonitor {
  readonly violations: string[] = [];
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
          };
          this.latest.set(worker.label, { reading, at: started });
          return { label: worker.label, reading };
        } catch {
          return undefined; // frozen (SIGSTOP) or gone
        }
      }),
    );
    this.rounds++;
    const committing: string[] = [];
    for (const entry of readings) {
      if (!entry) continue;
      const before = this.last.get(entry.label);
      if (before && entry.reading.pages > before.pages) committing.push(entry.label);
      this.last.set(entry.label, entry.reading);
    }
    if (committing.length > 1) this.violations.push(`round ${this.rounds}: ${committing.join(' and ')} both committed pages`);
  }
}
