import { appendFileSync } from 'node:fs';
import { inject } from 'vitest';
import type { TrialRow } from './summary.js';

/** What a scenario fills in as it learns it; the result is decided at the end. */
export interface TrialRecorder {
  set(fields: Partial<Omit<TrialRow, 'scenario' | 'result'>>): void;
}

/**
 * Runs one scenario body and appends its row to the suite's results file, also
 * when the body throws (then the row says fail with the first line of the error).
 * A pass with anything lost or duplicated is recorded as a fail.
 */
export async function runScenario(scenario: string, body: (trial: TrialRecorder) => Promise<void>): Promise<void> {
  const row: TrialRow = { scenario, trials: 0, lost: 0, duplicated: 0, result: 'pass' };
  const trial: TrialRecorder = { set: (fields) => Object.assign(row, fields) };
  try {
    await body(trial);
    if (row.lost > 0 || row.duplicated > 0) row.result = 'fail';
  } catch (error) {
    row.result = 'fail';
    row.note = (error instanceof Error ? error.message : String(error)).split('\n')[0]?.slice(0, 160);
    throw error;
  } finally {
    appendFileSync(inject('faultsResultsFile'), `${JSON.stringify(row)}\n`);
  }
}

/** Records a scenario that cannot run here, with the reason. */
export function recordSkip(scenario: string, reason: string): void {
  const row: TrialRow = { scenario, trials: 0, lost: 0, duplicated: 0, result: 'skip', note: reason };
  appendFileSync(inject('faultsResultsFile'), `${JSON.stringify(row)}\n`);
}
