/**
 * The checkpoint moved since this worker read it (a reset, or another worker):
 * the page's transaction rolled back and nothing was applied. Reload and go on.
 */
export class CheckpointConflictError extends Error {
  override readonly name = 'CheckpointConflictError';
  readonly feed: string;
  readonly expectedVersion: number;

  constructor(feed: string, expectedVersion: number, options?: ErrorOptions) {
    super(`checkpoint of feed "${feed}" is no longer at version ${expectedVersion}: page not applied, reload the checkpoint`, options);
    this.feed = feed;
    this.expectedVersion = expectedVersion;
  }
}
