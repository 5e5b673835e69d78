import type { Logger } from '../../log/log.js';
import { ResponseTooLargeError } from '../../intake/errors/response-too-large-error.js';
import { MAX_PAGE_EVENTS, MAX_RESPONSE_BYTES_SETTING } from '../../intake/limits.js';
import { OversizedEventError } from './errors/oversized-event-error.js';
import type { FetchedPage } from './poll-loop.js';

/** One GET /events at an explicit limit. */
export type FetchAtLimit = (
  request: { iterator: string | null; limit: number; onSent?: () => void },
  signal: AbortSignal,
) => Promise<FetchedPage>;

/**
 * The poller's fetchPage over `fetchAt`, shrinking the page when a response is too large: a body over
 * MAX_RESPONSE_BYTES (or over MAX_PAGE_EVENTS events) is asked again at half the limit, down to 1; a
 * single event still too large throws OversizedEventError naming the position. The limit that worked
 * is kept for the next page and doubles back towards `pageLimit` after each page that fits, so one
 * large event costs a few requests, not a smaller page forever.
 */
export function shrinkingFetch(
  fetchAt: FetchAtLimit,
  pageLimit: number,
  log?: Pick<Logger, 'warn'>,
): (request: { iterator: string | null; onSent?: () => void }, signal: AbortSignal) => Promise<FetchedPage> {
  let next = pageLimit;
  return async ({ iterator, onSent }, signal) => {
    let limit = next;
    for (;;) {
      try {
        const page = await fetchAt({ iterator, limit, ...(onSent ? { onSent } : {}) }, signal);
        if (page.events.length > MAX_PAGE_EVENTS) {
          throw new ResponseTooLargeError(
            { method: 'GET', path: '/events' },
            MAX_PAGE_EVENTS,
            undefined,
            `${MAX_PAGE_EVENTS} events per page`,
          );
        }
        next = Math.min(pageLimit, limit * 2);
        return page;
      } catch (error) {
        if (!(error instanceof ResponseTooLargeError)) throw error;
        if (limit <= 1) throw new OversizedEventError(iterator, error);
        const smaller = Math.max(1, Math.floor(limit / 2));
        log?.warn(
          { limit, retryLimit: smaller, capBytes: error.capBytes, setting: MAX_RESPONSE_BYTES_SETTING },
          `GET /events answered too large a page at limit ${limit}: asking for ${smaller}`,
        );
        limit = smaller;
        next = smaller;
      }
    }
  };
}
