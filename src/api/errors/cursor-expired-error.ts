/** SQLSTATE of status_changes_since()'s `cursor expired` (0012_retention.sql). */
export const CURSOR_EXPIRED_SQLSTATE = 'IS410';

/**
 * The change follower's cursor is older than the oldest change retention kept (RETAIN_STATUS_CHANGES):
 * the changes after it were deleted, so reading on would skip them. Reconcile from prescription_status,
 * then follow again from null (the oldest change kept) or a newer cursor.
 */
export class CursorExpiredError extends Error {
  override readonly name = 'CursorExpiredError';
  readonly code = CURSOR_EXPIRED_SQLSTATE;

  constructor(
    /** the cursor that was refused (an opaque position, no row data) */
    readonly cursor: string | null,
    options?: { cause?: unknown },
  ) {
    super(
      `cursor expired: the status changes after cursor ${cursor ?? '(null)'} were deleted by retention (RETAIN_STATUS_CHANGES); ` +
        'reconcile from prescription_status, then follow again from null or a newer cursor',
      options,
    );
  }
}

/** `error` as a CursorExpiredError when the server said `cursor expired`; otherwise unchanged. */
export function asCursorExpired(error: unknown, cursor: string | null): unknown {
  for (let current: unknown = error, depth = 0; typeof current === 'object' && current !== null && depth < 5; depth++) {
    if ((current as { code?: unknown }).code === CURSOR_EXPIRED_SQLSTATE) return new CursorExpiredError(cursor, { cause: error });
    current = (current as { cause?: unknown }).cause;
  }
  return error;
}
