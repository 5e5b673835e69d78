import type { Command } from 'commander';
import { runWorker } from '../../../daemon/run.js';
import { CliUsageError } from '../../context/errors.js';
import { openStore } from '../../context/store-context.js';
import { DEFAULT_LEASE_WAIT_S, leaseWaitMsFrom } from './lease-wait.js';

interface RunOptions {
  once?: boolean;
  json?: boolean;
  demo?: boolean;
  waitForLease?: string;
}

/** Registers `intake-sync run [--once [--json] [--wait-for-lease SECONDS]]`. */
export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('run the sync worker: poll the event feed and apply it to the database (migrates on start)')
    .option('--once', 'drain the feed until it is caught up, print a summary and exit (cron, tests, benchmarks)')
    .option('--json', 'with --once: print the summary as one JSON object')
    .option(
      '--demo',
      'run against the built-in simulator although DATABASE_URL (or credentials) is set: never on a database holding an operator feed',
    )
    .option(
      '--wait-for-lease <seconds>',
      `with --once: give up (exit 1, naming the holder) when another process still holds a feed's lease after this long (default ${DEFAULT_LEASE_WAIT_S})`,
    )
    .action(async (options: RunOptions) => {
      // a daemon prints no summary: --json would be silently ignored
      if (options.json && !options.once) throw new CliUsageError('--json only applies together with --once');
      // refused before anything opens: bad input writes nothing
      const leaseWaitMs = leaseWaitMsFrom(options.waitForLease, options.once === true);
      process.exitCode = await runWorker({
        once: options.once === true,
        json: options.json === true,
        demo: options.demo === true,
        leaseWaitMs,
        openStore,
      });
    });
}
