import { describe, expect, test } from 'vitest';
import { BadRequestError } from '../../../src/intake/errors/bad-request-error.js';
import { NetworkError } from '../../../src/intake/errors/network-error.js';
import { NotFoundError } from '../../../src/intake/errors/not-found-error.js';
import { RequestTimeoutError } from '../../../src/intake/errors/request-timeout-error.js';
import { RequestValidationError } from '../../../src/intake/errors/request-validation-error.js';
import { ResponseSchemaError } from '../../../src/intake/errors/response-schema-error.js';
import { UnauthorizedError } from '../../../src/intake/errors/unauthorized-error.js';
import { UnexpectedStatusError } from '../../../src/intake/errors/unexpected-status-error.js';
import { UnprocessableEntityError } from '../../../src/intake/errors/unprocessable-entity-error.js';
import { UpstreamError } from '../../../src/intake/errors/upstream-error.js';
import {
  cancelPrecondition,
  outboxRetryDelayMs,
  outcomeOfError,
  rowAfter,
  type DeliveryOutcome,
  type OutboxKind,
} from '../../../src/sync/outbox/decisions.js';

const POST = { method: 'POST', path: '/prescriptions' } as const;
const DELETE = { method: 'DELETE', path: '/prescriptions/rx-1' } as const;
const backoff = { baseMs: 1_000, capMs: 60_000 };
const half = () => 0.5;

describe('outcomeOfError: what an error means for the row', () => {
  const cases: Array<[string, OutboxKind, unknown, DeliveryOutcome]> = [
    [
      "422 with field errors: refused, the operator's words without the value",
      'send',
      new UnprocessableEntityError(POST, { 'prescription.patient.dob': ['is invalid: 1990-99-99'] }),
      { kind: 'refused', status: 422, reason: '422 from the operator: prescription.patient.dob: is invalid …' },
    ],
    [
      '422 already taken (not after an ambiguous failure: the client settled that case)',
      'send',
      new UnprocessableEntityError(POST, { 'prescription.external_id': ['has already been taken'] }),
      {
        kind: 'refused',
        status: 422,
        reason: '422 from the operator: prescription.external_id has already been taken (by another prescription)',
      },
    ],
    [
      '400 keeps the operator error',
      'send',
      new BadRequestError(POST, 'request body is not valid JSON'),
      { kind: 'refused', status: 400, reason: '400 from the operator: request body is not valid JSON' },
    ],
    [
      '404 on cancel',
      'cancel',
      new NotFoundError(DELETE, 'prescription rx-1 not found'),
      { kind: 'refused', status: 404, reason: 'not found at the operator' },
    ],
    [
      'refused locally',
      'send',
      new RequestValidationError('POST /prescriptions', [{ path: 'prescription.prescriber.npi', message: 'bad' }]),
      { kind: 'refused', status: null, reason: 'refused by the client before sending: invalid prescription.prescriber.npi' },
    ],
    [
      '409 is not in the contract: refused',
      'send',
      new UnexpectedStatusError(POST, 409),
      { kind: 'refused', status: 409, reason: 'unexpected status 409 from the operator' },
    ],
    [
      '503 with Retry-After: retried',
      'send',
      new UpstreamError(POST, 503, 2_000),
      { kind: 'transient', status: 503, reason: '503 from the operator', retryAfterMs: 2_000 },
    ],
    [
      '429: retried',
      'cancel',
      new UpstreamError(DELETE, 429, undefined),
      { kind: 'transient', status: 429, reason: '429 from the operator', retryAfterMs: undefined },
    ],
    [
      '401: kept for after the credentials are fixed',
      'send',
      new UnauthorizedError(POST, undefined),
      { kind: 'transient', status: 401, reason: '401 from the operator: credentials refused', retryAfterMs: undefined },
    ],
    [
      'reset after sending: retried, may have landed',
      'send',
      new NetworkError(POST, 'ECONNRESET'),
      {
        kind: 'transient',
        status: null,
        reason: 'NetworkError ECONNRESET (the request may have landed: reconciled before any resend)',
        retryAfterMs: undefined,
      },
    ],
    [
      'connection refused: retried, never sent',
      'send',
      new NetworkError(POST, 'ECONNREFUSED'),
      { kind: 'transient', status: null, reason: 'NetworkError ECONNREFUSED', retryAfterMs: undefined },
    ],
    [
      'timeout: retried, may have landed',
      'send',
      new RequestTimeoutError(POST, 3_000),
      {
        kind: 'transient',
        status: null,
        reason: 'RequestTimeoutError (the request may have landed: reconciled before any resend)',
        retryAfterMs: undefined,
      },
    ],
    [
      'a torn 201 body: may have landed',
      'send',
      new ResponseSchemaError(POST, 201, []),
      {
        kind: 'transient',
        status: null,
        reason: 'ResponseSchemaError (the request may have landed: reconciled before any resend)',
        retryAfterMs: undefined,
      },
    ],
    [
      'a database error around the request: retried',
      'send',
      Object.assign(new Error('x'), { name: 'PostgresError', code: '57P01' }),
      { kind: 'transient', status: null, reason: 'PostgresError 57P01', retryAfterMs: undefined },
    ],
  ];
  test.each(cases)('%s', (_name, kind, error, expected) => {
    expect(outcomeOfError(kind, error, false)).toEqual(expected);
  });

  test('stopping wins over whatever the error was', () => {
    expect(outcomeOfError('send', new UpstreamError(POST, 500, undefined), true)).toEqual({ kind: 'aborted' });
  });

  test('a 422 message quoting a value never reaches the reason', () => {
    const outcome = outcomeOfError(
      'send',
      new UnprocessableEntityError(POST, { 'prescription.patient.first_name': ['Jane is not allowed'] }),
      false,
    );
    expect(JSON.stringify(outcome)).not.toContain('Jane');
  });
});

describe('rowAfter: the row after an outcome', () => {
  const cases: Array<[string, DeliveryOutcome, number, ReturnType<typeof rowAfter>]> = [
    [
      '201',
      { kind: 'delivered', status: 201 },
      1,
      { state: 'delivered', inDoubt: false, lastError: null, responseStatus: 201, retryInMs: null },
    ],
    [
      'found by reconciliation',
      { kind: 'delivered', status: 200 },
      3,
      { state: 'delivered', inDoubt: false, lastError: null, responseStatus: 200, retryInMs: null },
    ],
    [
      'refused',
      { kind: 'refused', status: 422, reason: 'r' },
      1,
      { state: 'failed', inDoubt: false, lastError: 'r', responseStatus: 422, retryInMs: null },
    ],
    // attempt 1: ceiling 1 s, equal jitter at 0.5 -> 750 ms
    [
      'transient, first attempt',
      { kind: 'transient', status: 500, reason: 'r', retryAfterMs: undefined },
      1,
      { state: 'pending', inDoubt: true, lastError: 'r', responseStatus: 500, retryInMs: 750 },
    ],
    // attempt 4: ceiling 8 s -> 6 s
    [
      'transient, fourth attempt',
      { kind: 'transient', status: null, reason: 'r', retryAfterMs: undefined },
      4,
      { state: 'pending', inDoubt: true, lastError: 'r', responseStatus: null, retryInMs: 6_000 },
    ],
    ['aborted: untouched', { kind: 'aborted' }, 2, null],
  ];
  test.each(cases)('%s', (_name, outcome, attempts, expected) => {
    expect(rowAfter(outcome, attempts, backoff, half)).toEqual(expected);
  });
});

describe('outboxRetryDelayMs', () => {
  const cases: Array<[number, number, number | undefined, number]> = [
    // attempts, random, Retry-After, delay
    [1, 0, undefined, 500],
    [1, 0.999_999, undefined, 1_000],
    [2, 0, undefined, 1_000],
    [7, 0, undefined, 30_000],
    [8, 1, undefined, 60_000],
    [50, 1, undefined, 60_000],
    [0, 0, undefined, 500],
    [1, 0, 5_000, 5_000],
    [1, 0, 600_000, 60_000],
  ];
  test.each(cases)('attempt %i, random %d, Retry-After %s -> %i ms', (attempts, r, retryAfter, expected) => {
    expect(outboxRetryDelayMs(attempts, backoff, () => r, retryAfter)).toBe(expected);
  });
});

describe('cancelPrecondition: a cancel never overtakes its send', () => {
  test.each([
    ['no send in the outbox (sent some other way)', null, { action: 'deliver' }],
    ['its send delivered', { id: 3, state: 'delivered' as const }, { action: 'deliver' }],
    ['its send pending', { id: 3, state: 'pending' as const }, { action: 'wait' }],
    [
      'its send failed',
      { id: 3, state: 'failed' as const },
      { action: 'fail', reason: 'its send (outbox row 3) failed: nothing to cancel at the operator' },
    ],
  ])('%s', (_name, previous, expected) => {
    expect(cancelPrecondition(previous)).toEqual(expected);
  });
});
