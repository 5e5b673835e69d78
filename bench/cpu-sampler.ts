import { readdir, readFile } from 'node:fs/promises';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a live process has used; undefined once it is gone. */
export async function cpuSeconds(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) may hold spaces: count fields from after its closing parenthesis
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** The pid of a running process whose command line contains `needle`, if any. */
export async function findProcess(needle: string): Promise<number | undefined> {
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(needle) && !cmdline.includes('drain-compare')) return Number(entry);
  }
  return undefined;
}

/**
 * Samples the CPU seconds of a set of processes every `intervalMs` until stop(): each pid's last reading
 * before it exited counts. `pids()` is asked again at each tick (processes appear during the run).
 */
export function sampleCpu(pids: () => Promise<number[]>, intervalMs = 100): { stop(): Promise<number> } {
  const last = new Map<number, number>();
  let running = true;
  const tick = async () => {
    for (const pid of await pids().catch(() => [])) {
      const seconds = await cpuSeconds(pid);
      if (seconds !== undefined) last.set(pid, seconds);
    }
  };
  const loop = (async () => {
    while (running) {
      await tick();
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return [...last.values()].reduce((sum, s) => sum + s, 0);
    },
  };
}

/** The whole machine's CPU ticks since boot (/proc/stat), busy (all but idle and iowait) and in total. */
export async function machineCpuTicks(): Promise<{ busy: number; total: number }> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '';
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.slice(0, 8).reduce((sum, n) => sum + n, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { busy: total - idle, total };
}
