import type { ResponseTooLargeError } from '../../../intake/errors/response-too-large-error.js';

/**
 * GET /events answered too large a page even at `limit=1`: the one event at `iterator` is larger than
 * MAX_RESPONSE_BYTES. No smaller request exists, so the feed stops there (cursor problem
 * `oversized-event`) until MAX_RESPONSE_BYTES is raised or `intake-sync events skip` passes the event.
 */
export class OversizedEventError extends Error {
  override readonly name = 'OversizedEventError';
  readonly capBytes: number;

  constructor(
    /** the position whose next event is too large; null = the beginning of the feed */
    readonly iterator: string | null,
    cause: ResponseTooLargeError,
  ) {
    const at = iterator === null ? 'the beginning' : `iterator ${iterator}`;
    super(`GET /events at ${at}: too large even at limit=1 (${cause.message})`, { cause });
    this.capBytes = cause.capBytes;
  }
}
