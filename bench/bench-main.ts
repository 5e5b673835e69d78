import { dropUndroppedDatabases } from './database.js';
import { killAllChildren } from './processes.js';

/**
 * Runs one bench's `main` as the process's entry point: its children are killed however the process
 * ends, an interrupt also drops the databases it created (exit 130), and a failure is one line on
 * stderr with exit 1.
 */
export async function runBench(name: string, main: () => Promise<void>): Promise<void> {
  process.on('exit', killAllChildren);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      killAllChildren();
      void dropUndroppedDatabases().finally(() => process.exit(130));
    });
  }
  try {
    await main();
  } catch (error) {
    process.stderr.write(`${name}: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
