/**
 * Prints the reliability table of the last `npm run test:faults` (or of the
 * results file given as the first argument), for docs/guarantees.md, "The fault suite".
 * Usage: node --import tsx scripts/fault-summary.ts [results.ndjson]
 */
import { LAST_RESULTS_FILE } from '../test/support/faults/global-setup.js';
import { formatSummary, readTrialRows } from '../test/support/faults/summary.js';

const file = process.argv[2] ?? LAST_RESULTS_FILE;
const rows = readTrialRows(file);
if (rows.length === 0) {
  process.stderr.write(`no results in ${file}: run npm run test:faults first\n`);
  process.exitCode = 1;
} else {
  process.stdout.write(formatSummary(rows));
}
