import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  NetworkError,
  NotFoundError,
  RequestTimeoutError,
  RequestValidationError,
  ResponseSchemaError,
  UnauthorizedError,
  UnexpectedStatusError,
  UnprocessableEntityError,
  UpstreamError,
  isRetryable,
} from '../../src/intake/errors/index.js';
import { decideRetry, mayHaveBeenProcessed, wasSurelyNotProcessed, type RetryMode } from '../../src/intake/retry-policy.js';

const ctx = { method: 'GET', path: '/events' };
const errors = {
  badRequest: new BadRequestError(ctx, 'bad'),
  unauthorized: new UnauthorizedError(ctx, 'no'),
  notFound: new NotFoundError(ctx, 'gone'),
  unprocessable: new UnprocessableEntityError(ctx, { 'prescription.patient.dob': ['is invalid'] }),
  unexpected: new UnexpectedStatusError(ctx, 409),
  local: new RequestValidationError('GET /events', [{ path: 'limit', message: 'too big' }]),
  status500: new UpstreamError(ctx, 500, undefined),
  status503: new UpstreamError(ctx, 503, 1_000),
  status429: new UpstreamError(ctx, 429, 1_000),
  refused: new NetworkError(ctx, 'ECONNREFUSED'),
  dns: new NetworkError(ctx, 'ENOTFOUND'),
  reset: new NetworkError(ctx, 'ECONNRESET'),
  socketClosed: new NetworkError(ctx, 'UND_ERR_SOCKET'),
  unknownNetwork: new NetworkError(ctx, undefined),
  timeout: new RequestTimeoutError(ctx, 100),
  torn: new ResponseSchemaError(ctx, 200, [{ path: '(body)', message: 'is not JSON' }]),
  plain: new Error('boom'),
  nonError: 'a string',
} as const;
type Kind = keyof typeof errors;

// kind, isRetryable, wasSurelyNotProcessed, mayHaveBeenProcessed, retried when repeatable/reconciled/unrepeatable
const table: [Kind, boolean, boolean, boolean, boolean, boolean][] = [
  ['badRequest', false, false, false, false, false],
  ['unauthorized', false, false, false, false, false],
  ['notFound', false, false, false, false, false],
  ['unprocessable', false, false, false, false, false],
  ['unexpected', false, false, false, false, false],
  ['local', false, false, false, false, false],
  ['status500', true, false, true, true, false],
  ['status503', true, false, true, true, false],
  ['status429', true, true, false, true, true],
  ['refused', true, true, false, true, true],
  ['dns', true, true, false, true, true],
  ['reset', true, false, true, true, false],
  ['socketClosed', true, false, true, true, false],
  ['unknownNetwork', true, false, true, true, false],
  ['timeout', true, false, true, true, false],
  ['torn', false, false, true, true, false],
  ['plain', false, false, false, false, false],
  ['nonError', false, false, false, false, false],
];

const policy = { retries: 6, baseMs: 100, capMs: 1_000, maxElapsedMs: 10_000 };
const decide = (mode: RetryMode, error: unknown, elapsedMs = 0) =>
  decideRetry({ mode, error, retryIndex: 0, elapsedMs, policy, random: () => 0.5 });

describe.each(table)('%s', (kind, retryable, notProcessed, maybeProcessed, repeatable, unrepeatable) => {
  const error = errors[kind];
  it(`isRetryable is ${retryable}`, () => expect(isRetryable(error)).toBe(retryable));
  it(`wasSurelyNotProcessed is ${notProcessed}`, () => expect(wasSurelyNotProcessed(error)).toBe(notProcessed));
  it(`mayHaveBeenProcessed is ${maybeProcessed}`, () => expect(mayHaveBeenProcessed(error)).toBe(maybeProcessed));
  it(`retried: repeatable ${repeatable}, reconciled ${repeatable}, unrepeatable ${unrepeatable}`, () => {
    expect(decide('repeatable', error).retry).toBe(repeatable);
    expect(decide('reconciled', error).retry).toBe(repeatable);
    expect(decide('unrepeatable', error).retry).toBe(unrepeatable);
  });
});

describe('decideRetry', () => {
  it('waits the backoff delay', () => {
    expect(decide('repeatable', errors.status500)).toEqual({ retry: true, delayMs: 50 });
  });

  it('waits at least the Retry-After', () => {
    expect(decide('repeatable', errors.status429)).toEqual({ retry: true, delayMs: 1_050 });
  });

  it.each([
    [8_949, true],
    [8_950, true], // ends exactly at the budget
    [8_951, false],
  ])('refuses a wait that would end past maxElapsedMs (elapsed %i -> %s)', (elapsedMs, retry) => {
    const decision = decide('repeatable', errors.status429, elapsedMs);
    expect(decision.retry).toBe(retry);
    if (!decision.retry) expect(decision.reason).toBe('out-of-time');
  });

  it('names why it refuses', () => {
    expect(decide('repeatable', errors.unauthorized)).toEqual({ retry: false, reason: 'not-retryable' });
  });

  it.each([
    [0, true],
    [5, true], // the sixth retry of six
    [6, false],
  ])('retries at most policy.retries times (retry index %i -> %s)', (retryIndex, retry) => {
    const decision = decideRetry({ mode: 'repeatable', error: errors.status500, retryIndex, elapsedMs: 0, policy, random: () => 0.5 });
    expect(decision.retry).toBe(retry);
    if (!decision.retry) expect(decision.reason).toBe('out-of-retries');
  });
});
