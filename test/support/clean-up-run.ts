import { cleanUpRun } from './global-setup.js';

// `node --import tsx test/support/clean-up-run.ts RUN_ID`: what the global teardown does, as a process
// of its own, for an interrupted run (the interrupted vitest can only wait for it synchronously).
const id = process.argv[2] ?? '';
if (!/^[0-9a-f]{8}$/.test(id)) {
  process.stderr.write('usage: clean-up-run.ts RUN_ID (8 hex digits)\n');
  process.exit(2);
}
const done = await cleanUpRun(id);
process.stderr.write(
  `test run ${id} cleaned up: ${done.processes} process group(s) ended, ${done.databases.length} database(s) and ${done.roles.length} role(s) dropped\n`,
);
