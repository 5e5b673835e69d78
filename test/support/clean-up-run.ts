import { cleanUpRun } from './global-setup.js';

// `node --import tsx test/support/clean-up-run.ts RUN_ID [PID]`: what the global teardown does, as
// a process of its own. With PID (the global setup's watchdog): first waits for that process (the
// vitest of the run) to end, however it ends, Ctrl-C and kill -9 included.
const [id = '', pid] = process.argv.slice(2);
if (!/^[0-9a-f]{8}$/.test(id) || (pid !== undefined && !/^\d+$/.test(pid))) {
  process.stderr.write('usage: clean-up-run.ts RUN_ID [PID]\n');
  process.exit(2);
}

function running(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch {
    return false;
  }
}

if (pid !== undefined) {
  // a watchdog, not a test: it polls the one fact it waits for, twice a second
  while (running(Number(pid))) await new Promise((resolve) => setTimeout(resolve, 500));
}
const done = await cleanUpRun(id);
process.stderr.write(
  `test run ${id} cleaned up: ${done.processes} process group(s) ended, ${done.databases.length} database(s) and ${done.roles.length} role(s) dropped\n`,
);
