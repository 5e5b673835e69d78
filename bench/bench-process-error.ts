/** A bench child process (sandbox, worker) failed to start, report or exit cleanly. */
export class BenchProcessError extends Error {
  override readonly name = 'BenchProcessError';
}
