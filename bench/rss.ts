import { readFile } from 'node:fs/promises';

/** Resident memory of a process, in kB as /proc reports it. */
export interface MemoryReading {
  /** current resident set */
  rssKb: number;
  /** the kernel's high-water mark of the resident set since the process started */
  hwmKb: number;
}

/** Reads VmRSS and VmHWM out of a /proc/<pid>/status text; undefined when either is missing. */
export function parseProcStatus(text: string): MemoryReading | undefined {
  const rss = /^VmRSS:\s+(\d+)\s+kB$/m.exec(text);
  const hwm = /^VmHWM:\s+(\d+)\s+kB$/m.exec(text);
  if (!rss?.[1] || !hwm?.[1]) return undefined;
  return { rssKb: Number(rss[1]), hwmKb: Number(hwm[1]) };
}

/** One reading of a live process; undefined once it has exited. */
export async function readMemory(pid: number): Promise<MemoryReading | undefined> {
  try {
    return parseProcStatus(await readFile(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return undefined;
  }
}

export interface MemorySampler {
  /** Stops sampling; returns the peak (kB) and the RSS series (ms since start, kB). */
  stop(): { peakKb: number; series: Array<[number, number]> };
}

/**
 * Samples a child's VmRSS/VmHWM every `intervalMs`. VmHWM is the kernel's own peak,
 * so a spike between two samples is still counted.
 */
export function sampleMemory(pid: number, intervalMs: number): MemorySampler {
  const started = performance.now();
  const series: Array<[number, number]> = [];
  let peakKb = 0;
  const timer = setInterval(() => {
    void readMemory(pid).then((reading) => {
      if (!reading) return;
      peakKb = Math.max(peakKb, reading.hwmKb);
      series.push([Math.round(performance.now() - started), reading.rssKb]);
    });
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      return { peakKb, series };
    },
  };
}
