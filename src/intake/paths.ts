import { RequestValidationError } from './errors/request-validation-error.js';

// an id that would change the request's path once a server or proxy normalises or decodes it
const PATH_CHANGING = /[/\\%\p{Cc}]/u;

/**
 * One path segment from an identifier, or a RequestValidationError (nothing sent) for an id that
 * would change the request's path: empty, `.` or `..` (`DELETE {base}/prescriptions/..` is
 * `DELETE {base}/`), or holding a slash, backslash, `%` (a percent-encoded one a proxy decodes) or a
 * control character. Spaces, `?` and `#` are encoded and stay inside the segment. Never echoes the id (an external_id is the vendor's).
 */
export function pathSegment(operation: string, field: string, id: string): string {
  const problem =
    typeof id !== 'string' || id === ''
      ? 'must not be empty'
      : id === '.' || id === '..'
        ? 'must not be . or ..'
        : PATH_CHANGING.test(id)
          ? 'must not contain / \\ % or control characters'
          : undefined;
  if (problem) throw new RequestValidationError(operation, [{ path: field, message: problem }]);
  return encodeURIComponent(id);
}

/** Request paths relative to the base URL; an identifier is one segment or refused (pathSegment). */
export const intakePaths = {
  events: '/events',
  event: (id: string) => `/events/${pathSegment('GET /events/{id}', 'id', id)}`,
  subscriptions: '/subscriptions',
  subscription: (id: string) => `/subscriptions/${pathSegment('/subscriptions/{id}', 'id', id)}`,
  prescriptions: '/prescriptions',
  prescription: (externalId: string) => `/prescriptions/${pathSegment('/prescriptions/{external_id}', 'external_id', externalId)}`,
} as const;
