/** Thrown by a waitFor probe to stop waiting at once (e.g. the awaited process already exited). */
export class FatalProbeError extends Error {
  override readonly name = 'FatalProbeError';
}
