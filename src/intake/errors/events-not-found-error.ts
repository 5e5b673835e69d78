import type { NotFoundError } from './not-found-error.js';
import type { RequestContext } from './request-context.js';

/**
 * 404 on GET /events: the feed itself is not there, so the base URL is wrong (a missing or wrong
 * `/intake_api/<version>`, another host's path). A configuration error, not a transient one: it is
 * never retried, and the worker stops the feed naming the URL.
 */
export class EventsNotFoundError extends Error {
  override readonly name = 'EventsNotFoundError';
  readonly status = 404;
  readonly context: RequestContext;

  constructor(
    /** the base URL as scheme, host and path (no credentials, no query) */
    readonly baseUrl: string,
    cause: NotFoundError,
  ) {
    super(
      `GET ${baseUrl}/events answered 404 Not Found: the operator base URL is wrong (check INTAKE_API_BASE_URL, or the feed's base_url in FEEDS_FILE; it must end in /intake_api/<version>)`,
      { cause },
    );
    this.context = cause.context;
  }
}
