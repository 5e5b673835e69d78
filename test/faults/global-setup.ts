import { copyFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { formatSummary, readTrialRows } from './harness/summary.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** NDJSON file each scenario appends its TrialRow to */
    faultsResultsFile: string;
  }
}

/** Where the last run's rows are kept for `scripts/fault-summary.ts`. */
export const LAST_RESULTS_FILE = join(tmpdir(), 'intake-sync-faults-last.ndjson');

/** Gives the scenarios a fresh results file; prints the reliability table when the suite ends. */
export default function setup(project: TestProject): () => void {
  const file = join(tmpdir(), `intake-sync-faults-${process.pid}.ndjson`);
  writeFileSync(file, '');
  project.provide('faultsResultsFile', file);
  const started = Date.now();
  return () => {
    const rows = readTrialRows(file);
    copyFileSync(file, LAST_RESULTS_FILE);
    const seconds = Math.round((Date.now() - started) / 1000);
    process.stdout.write(`\nReliability (npm run test:faults, ${seconds} s)\n\n${formatSummary(rows)}\n`);
  };
}
