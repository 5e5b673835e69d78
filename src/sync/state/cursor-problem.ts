import { BadRequestError } from '../../intake/errors/bad-request-error.js';

/**
 * Why the worker stopped consuming a feed at its stored position:
 * - `expired`: the operator refused the iterator with a 400 whose message says it expired;
 * - `refused`: a 400 to a request that carried our iterator, giving another (or no stated) reason;
 * - `gap-suspected`: no page was committed for longer than the configured retention, so events
 *   may have been dropped without the operator saying so (an operator that jumps silently).
 * - `oversized-event`: the next event alone makes GET /events answer more than MAX_RESPONSE_BYTES
 *   (even at limit=1): raise the cap, or skip exactly that event with `intake-sync events skip`.
 * Each needs a person: `intake-sync resync` (or `checkpoint reset` when the gap is known to be empty),
 * or for `oversized-event` the cap or the skip.
 */
export type CursorProblemKind = 'expired' | 'refused' | 'gap-suspected' | 'oversized-event';

/** The kinds `resync` fixes (intake_sync_feed_cursor_expired); `oversized-event` has its own gauge and alert. */
export function isRetentionProblem(kind: CursorProblemKind): boolean {
  return kind !== 'oversized-event';
}

/** What a GET /events failure tells about the stored position, as plain facts (see classifyEventsFailure). */
export interface EventsFailureFacts {
  /** the HTTP status, or undefined when there was no answer (network, timeout) */
  status: number | undefined;
  /** the body's `error` string, when the body was the spec's `{error}` JSON */
  serverMessage: string | undefined;
  /** the request carried an iterator (a request without one reads from the start and cannot be expired) */
  iteratorSent: boolean;
}

// wording an operator would use for a position past retention; matched on the operator's own message
const EXPIRY_WORDING = /expir|retention|retained|no longer (available|exists?)|too old|purged|trimmed/i;

/**
 * Classifies a GET /events failure. Pure. The spec lists no 400 for GET /events, so this is our
 * decision (docs/decisions.md, "An expired cursor"): a 400 to a request that carried our stored iterator, with the
 * spec's `{error}` body, is the operator refusing that position: retrying the same request cannot
 * succeed, so it is a state of its own, never a transient failure. Its message decides between
 * `expired` and `refused`. A 400 without an iterator, or whose body is not the operator's `{error}`
 * JSON (a proxy's HTML page), stays an ordinary failure: backoff, retry, /readyz after a few.
 */
export function classifyEventsFailure(facts: EventsFailureFacts): 'expired' | 'refused' | null {
  if (facts.status !== 400 || !facts.iteratorSent || facts.serverMessage === undefined) return null;
  return EXPIRY_WORDING.test(facts.serverMessage) ? 'expired' : 'refused';
}

/** The facts of a thrown GET /events failure (thin adapter over the client's error classes). */
export function eventsFailureFacts(error: unknown, iteratorSent: boolean): EventsFailureFacts {
  if (error instanceof BadRequestError) return { status: 400, serverMessage: error.serverMessage, iteratorSent };
  const status = (error as { status?: unknown } | null)?.status;
  return { status: typeof status === 'number' ? status : undefined, serverMessage: undefined, iteratorSent };
}

/**
 * Whether a stored position may lie past the operator's retention although the operator will not
 * say so. Pure. Only a position we hold (iterator not null) can be past it, and only when retention
 * is configured: then a checkpoint that has not moved for `retentionMs` (a running worker stamps it
 * at least every retentionMs / 20, even caught up: see checkpointNeedsTouch) means nobody read the
 * feed for that long.
 */
export function suspectsGap(
  checkpoint: { iterator: string | null; updatedAtMs: number },
  nowMs: number,
  retentionMs: number | undefined,
): boolean {
  if (retentionMs === undefined || checkpoint.iterator === null) return false;
  return nowMs - checkpoint.updatedAtMs >= retentionMs;
}

/**
 * Whether a caught-up poll, which writes nothing, must stamp the checkpoint's updated_at so that
 * suspectsGap keeps meaning "nobody polled": only with retention configured, once the stamp is
 * retentionMs / 20 old (a dead worker's last poll then reads at most 5% older than it was). Pure.
 */
export function checkpointNeedsTouch(updatedAtMs: number, nowMs: number, retentionMs: number | undefined): boolean {
  return retentionMs !== undefined && nowMs - updatedAtMs >= retentionMs / 20;
}

/**
 * The manual `checkpoint reset` that set the refused iterator: the operator refusing a position a
 * person just typed is a typo to undo, not a gap to resync (resync re-subscribes everything).
 */
export interface ResetHint {
  /** the iterator before the reset (null: the beginning): what undoing it restores */
  previous: string | null;
  by: string;
  at: Date;
}

/**
 * The reset to blame for a refused iterator: the feed's latest manual reset when it set exactly the
 * iterator the operator refused (so no page moved the checkpoint since). Pure. The simulator's own
 * rewinds are not manual.
 */
export function resetToBlame(
  refusedIterator: string | null,
  latest: { from: string | null; to: string | null; by: string; at: Date } | null,
): ResetHint | null {
  if (refusedIterator === null || latest === null || latest.to !== refusedIterator || latest.by === 'embedded-sandbox') return null;
  return { previous: latest.from, by: latest.by, at: latest.at };
}

/** What a stopped feed's line names besides its kind. */
export interface CursorProblemContext {
  /** the stored position (null: the beginning), named for `oversized-event`, whose fix takes it as an argument */
  at?: string | null | undefined;
  /** the manual reset that set a refused iterator (see resetToBlame) */
  reset?: ResetHint | null | undefined;
}

/** The command that fixes a stopped feed, as its line names it (describeCursorProblem). */
export function cursorProblemCommand(feed: string, kind: CursorProblemKind, context: CursorProblemContext = {}): string {
  const { at, reset } = context;
  if (kind === 'oversized-event')
    return `intake-sync events skip --feed ${feed} ${at === undefined || at === null ? '--beginning' : `--at ${at}`}`;
  if (reset && kind !== 'gap-suspected')
    return `intake-sync checkpoint reset --feed ${feed} ${reset.previous === null ? '--beginning' : `--to ${reset.previous}`}`;
  return `intake-sync resync --feed ${feed}`;
}

/** The PHI-free line /readyz, logs and errors use for a stopped feed. */
export function describeCursorProblem(feed: string, kind: CursorProblemKind, context: CursorProblemContext = {}): string {
  const { at, reset } = context;
  const command = cursorProblemCommand(feed, kind, context);
  if (kind === 'oversized-event') {
    return (
      `feed ${feed} stopped consuming: the next event alone is larger than MAX_RESPONSE_BYTES (GET /events at ${at ?? 'the beginning'} with limit=1); ` +
      `raise MAX_RESPONSE_BYTES, or skip exactly that event with \`${command}\` (see docs/runbook.md)`
    );
  }
  if (reset && kind !== 'gap-suspected') {
    return (
      `feed ${feed} stopped consuming: the operator refuses the iterator that \`checkpoint reset\` set at ${reset.at.toISOString()} ` +
      `(by ${reset.by}); undo the reset with \`${command}\` (the previous position, from ` +
      'the audit), not resync'
    );
  }
  const why = {
    expired: 'the operator says the stored iterator expired (events past its retention are gone)',
    refused: 'the operator refuses the stored iterator (400)',
    'gap-suspected': 'no page was committed for longer than FEED_RETENTION_MS, so events may have expired unseen',
  }[kind];
  return `feed ${feed} stopped consuming: ${why}; run \`${command}\` (see docs/resync.md)`;
}
