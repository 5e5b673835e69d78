/** Bad bench command-line input: printed as one message without a stack, exit code 2. */
export class BenchUsageError extends Error {
  override readonly name = 'BenchUsageError';
}
