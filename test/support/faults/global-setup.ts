import { execFileSync } from 'node:child_process';
import { copyFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { formatSummary, readTrialRows } from './summary.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** NDJSON file each scenario appends its TrialRow to */
    faultsResultsFile: string;
  }
}

/** Where the last run's rows are kept for `scripts/fault-summary.ts`. */
export const LAST_RESULTS_FILE = join(tmpdir(), 'intake-sync-faults-last.ndjson');

/**
 * Builds dist/ from the current sources (the scenarios run the compiled CLI), gives the
 * scenarios a fresh results file, and prints the reliability table when the suite ends.
 */
export default function setup(project: TestProject): () => void {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
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
