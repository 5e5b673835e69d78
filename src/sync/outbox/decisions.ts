import { BadRequestError } from '../../intake/errors/bad-request-error.js';
import { NotFoundError } from '../../intake/errors/not-found-error.js';
import { RequestValidationError } from '../../intake/errors/request-validation-error.js';
import { UnauthorizedError } from '../../intake/errors/unauthorized-error.js';
import { UnexpectedStatusError } from '../../intake/errors/unexpected-status-error.js';
import { UnprocessableEntityError } from '../../intake/errors/unprocessable-entity-error.js';
import { UpstreamError } from '../../intake/errors/upstream-error.js';
import { describeFieldErrors } from '../../intake/operator-text.js';
import { mayHaveBeenProcessed } from '../../intake/retry-policy.js';

// What the leader does with an outbox row, given what happened to its request. Pure: the I/O
// around it is outbox-delivery.ts. Table-tested in test/sync/outbox/decisions.test.ts.

export type OutboxKind = 'send' | 'cancel';
export type OutboxState = 'pending' | 'delivered' | 'failed';

/** What one delivery attempt came to, as far as the row is concerned. */
export type DeliveryOutcome =
  /** 201 (or found by GET after an ambiguous failure); DELETE answered 200 */
  | { kind: 'delivered'; status: number }
  /** final: the operator (or the client's own schema) refused the request; retrying cannot help */
  | { kind: 'refused'; status: number | null; reason: string }
  /** may pass: 5xx, 429, timeout, reset, 401, a database error around the request */
  | { kind: 'transient'; status: number | null; reason: string; retryAfterMs: number | undefined }
  /** this process is stopping: the row stays as it is, the next leader reconciles */
  | { kind: 'aborted' };

/** The row's next state; `retryInMs` is set for a row that stays pending. */
export interface RowUpdate {
  state: OutboxState;
  inDoubt: boolean;
  lastError: string | null;
  responseStatus: number | null;
  retryInMs: number | null;
}

/** The per-row backoff across delivery cycles (the client's own retries happen inside one attempt). */
export interface OutboxBackoff {
  baseMs: number;
  capMs: number;
}

const MAX_REASON_CHARS = 300;
const ALREADY_TAKEN = 'has already been taken';

/** Turns a delivery's error into an outcome. `aborted` is the stop signal's state. */
export function outcomeOfError(kind: OutboxKind, error: unknown, aborted: boolean): DeliveryOutcome {
  if (aborted) return { kind: 'aborted' };
  if (error instanceof UnprocessableEntityError) return { kind: 'refused', status: 422, reason: unprocessableReason(error) };
  if (error instanceof BadRequestError) {
    // sanitised by the error (sanitizeOperatorText): validation words only
    const detail = error.serverMessage ? `: ${error.serverMessage}` : '';
    return { kind: 'refused', status: 400, reason: clip(`400 from the operator${detail}`) };
  }
  if (error instanceof NotFoundError) {
    return { kind: 'refused', status: 404, reason: kind === 'cancel' ? 'not found at the operator' : '404 from the operator' };
  }
  if (error instanceof RequestValidationError) {
    return {
      kind: 'refused',
      status: null,
      reason: clip(`refused by the client before sending: invalid ${error.issues.map((i) => i.path).join(', ')}`),
    };
  }
  if (error instanceof UnexpectedStatusError) {
    return { kind: 'refused', status: error.status, reason: `unexpected status ${error.status} from the operator` };
  }
  if (error instanceof UnauthorizedError) {
    // our credentials, not the row: keep it and try again once they are fixed
    return { kind: 'transient', status: 401, reason: '401 from the operator: credentials refused', retryAfterMs: undefined };
  }
  if (error instanceof UpstreamError) {
    return { kind: 'transient', status: error.status, reason: `${error.status} from the operator`, retryAfterMs: error.retryAfterMs };
  }
  const name = error instanceof Error ? error.name : typeof error;
  const ambiguity = mayHaveBeenProcessed(error) ? ' (the request may have landed: reconciled before any resend)' : '';
  const code = (error as { code?: unknown } | null)?.code;
  return {
    kind: 'transient',
    status: null,
    reason: clip(`${name}${typeof code === 'string' ? ` ${code}` : ''}${ambiguity}`),
    retryAfterMs: undefined,
  };
}

/**
 * The row after an outcome. A send stays in doubt after any failure that is not final: one of
 * the client's inner attempts may have landed even when the last error proves nothing was sent,
 * so the next attempt looks the external_id up first. `null`: leave the row untouched.
 */
export function rowAfter(outcome: DeliveryOutcome, attempts: number, backoff: OutboxBackoff, random: () => number): RowUpdate | null {
  switch (outcome.kind) {
    case 'aborted':
      return null;
    case 'delivered':
      return { state: 'delivered', inDoubt: false, lastError: null, responseStatus: outcome.status, retryInMs: null };
    case 'refused':
      return { state: 'failed', inDoubt: false, lastError: outcome.reason, responseStatus: outcome.status, retryInMs: null };
    case 'transient':
      return {
        state: 'pending',
        inDoubt: true,
        lastError: outcome.reason,
        responseStatus: outcome.status,
        retryInMs: outboxRetryDelayMs(attempts, backoff, random, outcome.retryAfterMs),
      };
  }
}

/**
 * Delay before a row's next attempt: exponential in its attempts, capped, with equal jitter (half
 * fixed, half random: rows failed together spread out, and the delay is never zero, so a failing
 * row cannot spin). A Retry-After longer than that wins.
 */
export function outboxRetryDelayMs(attempts: number, backoff: OutboxBackoff, random: () => number, retryAfterMs?: number): number {
  const exponent = Math.min(Math.max(attempts - 1, 0), 30);
  const ceiling = Math.min(backoff.capMs, backoff.baseMs * 2 ** exponent);
  const delay = Math.round(ceiling / 2 + (random() * ceiling) / 2);
  return Math.max(delay, Math.min(retryAfterMs ?? 0, backoff.capMs));
}

/** What to do with a cancel at the head of its external_id, given the send before it (if any). */
export type CancelPrecondition = { action: 'deliver' } | { action: 'wait' } | { action: 'fail'; reason: string };

/** A cancel never overtakes its send: it waits behind a pending one and fails behind a failed one. */
export function cancelPrecondition(previousSend: { id: number; state: OutboxState } | null): CancelPrecondition {
  if (previousSend === null || previousSend.state === 'delivered') return { action: 'deliver' };
  if (previousSend.state === 'pending') return { action: 'wait' };
  return { action: 'fail', reason: `its send (outbox row ${previousSend.id}) failed: nothing to cancel at the operator` };
}

// the operator's words as the error keeps them: known field paths and sanitised messages, no values
function unprocessableReason(error: UnprocessableEntityError): string {
  const paths = error.fieldPaths;
  const taken = paths.filter((path) => (error.errors[path] ?? []).includes(ALREADY_TAKEN));
  if (taken.length > 0 && paths.length === taken.length) {
    return clip(`422 from the operator: ${taken.join(', ')} ${ALREADY_TAKEN} (by another prescription)`);
  }
  return clip(`422 from the operator: ${paths.length > 0 ? describeFieldErrors(error.errors) : '(no field named)'}`);
}

function clip(text: string): string {
  return text.length > MAX_REASON_CHARS ? `${text.slice(0, MAX_REASON_CHARS - 1)}…` : text;
}
