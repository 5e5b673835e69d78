/** A broken checkpoint invariant seen by one sample of the CheckpointSampler. */
export class CheckpointViolation extends Error {
  override readonly name = 'CheckpointViolation';
}
