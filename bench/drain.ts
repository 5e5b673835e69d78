import { z } from 'zod';
import type { PageTiming } from './page-timings.js';
import { TIMING_PARTS } from './page-timings.js';
import { BenchProcessError } from './bench-process-error.js';
import { expectCleanExit, spawnNode } from './processes.js';
import { DAEMON_NODE_FLAGS } from '../src/daemon/daemon-node-flags.js';
import { sampleMemory } from './rss.js';
import type { SandboxProcess } from './sandbox-process.js';
import { summarize, type Summary } from './stats.js';

/** What a drain measured: throughput, the worker's peak memory and the per-page split. */
export interface DrainResult {
  events: number;
  pages: number;
  seconds: number;
  events_per_s: number;
  pages_per_s: number;
  peak_rss_mb: number;
  /** RSS over time (ms since spawn, MB): flat memory shows as a plateau */
  rss_series_mb: Array<[number, number]>;
  per_page_ms: Record<(typeof TIMING_PARTS)[number], Summary>;
}

const workerOutputSchema = z.object({
  summary: z.object({ drained: z.boolean(), received: z.number(), matched: z.number(), pages: z.number(), elapsedMs: z.number() }),
  peak_rss_kb: z.number(),
  pages: z.array(
    z.object({
      events: z.number(),
      fetch: z.number(),
      fetch_wait: z.number(),
      prepare: z.number(),
      validate: z.number(),
      write: z.number(),
      commit: z.number(),
      apply: z.number(),
    }) satisfies z.ZodType<PageTiming>,
  ),
});

/** Per-part distribution of page timings. */
export function summarizePages(pages: readonly PageTiming[]): DrainResult['per_page_ms'] {
  return Object.fromEntries(TIMING_PARTS.map((part) => [part, summarize(pages.map((p) => p[part]))])) as DrainResult['per_page_ms'];
}

/**
 * Drains the sandbox feed into `databaseUrl` in a child process (the compiled bench/drain-worker.ts),
 * sampling the child's /proc status so the peak RSS is the worker's alone.
 */
export async function runDrain(
  workerEntry: string,
  sandbox: SandboxProcess,
  databaseUrl: string,
  feed: string,
  nodeFlags: readonly string[] = DAEMON_NODE_FLAGS,
): Promise<DrainResult> {
  const worker = spawnNode('drain worker', [...nodeFlags, workerEntry], {
    ...process.env,
    DATABASE_URL: databaseUrl,
    INTAKE_API_BASE_URL: sandbox.baseUrl,
    INTAKE_API_KEY: sandbox.key,
    INTAKE_API_SECRET: sandbox.secret,
    FEED_NAME: feed,
    LOG_LEVEL: 'warn',
  });
  const sampler = sampleMemory(worker.pid, 100);
  let output: z.output<typeof workerOutputSchema>;
  try {
    output = workerOutputSchema.parse(await expectCleanExit('drain worker', worker));
  } finally {
    await worker.stop();
  }
  const memory = sampler.stop();
  // every seeded event has its local prescription: an unmatched one means the bench registered it in another
  // feed, and the drain measured the quarantine instead of the status updates
  if (output.summary.matched !== output.summary.received) {
    throw new BenchProcessError(
      `drain of feed ${feed}: ${output.summary.matched} of ${output.summary.received} events matched a local prescription`,
    );
  }
  const seconds = output.summary.elapsedMs / 1000;
  return {
    events: output.summary.received,
    pages: output.summary.pages,
    seconds,
    events_per_s: output.summary.received / seconds,
    pages_per_s: output.summary.pages / seconds,
    peak_rss_mb: Math.max(memory.peakKb, output.peak_rss_kb) / 1024,
    rss_series_mb: memory.series.map(([ms, kb]) => [ms, Math.round(kb / 102.4) / 10]),
    per_page_ms: summarizePages(output.pages),
  };
}
