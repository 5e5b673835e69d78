import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  BadRequestError,
  NotFoundError,
  ResponseSchemaError,
  UnauthorizedError,
  UnexpectedStatusError,
  UnprocessableEntityError,
  UpstreamError,
  coerceError,
} from '../../src/intake/errors/index.js';
import { interpretResponse } from '../../src/intake/response-reading.js';

const ctx = { method: 'POST', path: '/prescriptions' };
const schema = z.looseObject({ thing: z.looseObject({ id: z.string() }) });
const now = Date.parse('2024-12-10T12:00:00Z');
const read = (status: number, body: string, retryAfter: string | null = null) =>
  interpretResponse(ctx, { status, body, retryAfter }, schema, now);
const thrown = (fn: () => unknown): Error => {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
};

describe('interpretResponse', () => {
  it.each([200, 201, 204])('parses a %i body with its schema (unknown keys kept)', (status) => {
    expect(read(status, '{"thing":{"id":"a","extra":1}}')).toEqual({ thing: { id: 'a', extra: 1 } });
  });

  it.each([
    [400, BadRequestError],
    [401, UnauthorizedError],
    [404, NotFoundError],
    [422, UnprocessableEntityError],
    [429, UpstreamError],
    [500, UpstreamError],
    [502, UpstreamError],
    [503, UpstreamError],
    [403, UnexpectedStatusError],
    [409, UnexpectedStatusError],
    [302, UnexpectedStatusError],
  ])('maps %i to %s with method, path and status in the message', (status, type) => {
    const error = thrown(() => read(status, '{"error":"Patient Jane Doe is not valid"}'));
    expect(error).toBeInstanceOf(type);
    expect(error.name).toBe(type.name);
    expect(error.message).toMatch(/^POST \/prescriptions: /);
    expect(error.message).toContain(String(status));
    // the body may echo PHI: it stays out of the message
    expect(error.message).not.toContain('Jane');
  });

  it('keeps the error string of a 400/401/404 apart from the message', () => {
    const error = thrown(() => read(404, '{"error":"not found"}')) as NotFoundError;
    expect(error.serverMessage).toBe('not found');
    expect((thrown(() => read(401, '<html>')) as UnauthorizedError).serverMessage).toBeUndefined();
  });

  it("carries the 422 errors sanitised: the paths and the operator's words, never the value", () => {
    const body = JSON.stringify({
      errors: { 'prescription.patient.dob': ['1990-13-01 is not a date'], 'prescription.medication.ndc': ['x'] },
    });
    const error = thrown(() => read(422, body)) as UnprocessableEntityError;
    expect(error.errors).toEqual({ 'prescription.patient.dob': ['… is not a date'], 'prescription.medication.ndc': ['…'] });
    expect(error.fieldPaths).toEqual(['prescription.patient.dob', 'prescription.medication.ndc']);
    expect(error.message).toBe(
      'POST /prescriptions: 422 Unprocessable Entity: prescription.patient.dob: … is not a date, prescription.medication.ndc: …',
    );
    expect(error.message).not.toContain('1990');
  });

  it('treats a 422 without an errors object as a 422 with no paths', () => {
    const error = thrown(() => read(422, 'oops')) as UnprocessableEntityError;
    expect(error.errors).toEqual({});
  });

  it.each<[number, string | null, number | undefined]>([
    [429, '2', 2_000],
    [503, 'Tue, 10 Dec 2024 12:00:05 GMT', 5_000],
    [500, '2', undefined], // Retry-After means nothing on a 500
    [503, 'later', undefined],
    [429, null, undefined],
  ])('reads Retry-After on %i (%j -> %j)', (status, header, expected) => {
    const error = thrown(() => read(status, '', header)) as UpstreamError;
    expect(error.status).toBe(status);
    expect(error.retryAfterMs).toBe(expected);
  });

  it.each([
    ['{"thing":{"id":"a"', '(body)', 'is not JSON'],
    ['', '(body)', 'is not JSON'],
    ['[]', '(body)', undefined],
    ['{"thing":{}}', 'thing.id', undefined],
    ['{"thing":{"id":7}}', 'thing.id', undefined],
  ])('refuses the 2xx body %j at %s without quoting it', (body, path, message) => {
    const error = thrown(() => read(201, body)) as ResponseSchemaError;
    expect(error).toBeInstanceOf(ResponseSchemaError);
    expect(error.status).toBe(201);
    expect(error.issues.map((i) => i.path)).toContain(path);
    if (message) expect(error.issues[0]?.message).toBe(message);
    expect(error.message).toContain(`does not match the contract at ${path}`);
    if (body.length > 2) expect(error.message).not.toContain(body);
  });
});

describe('coerceError', () => {
  it('returns an Error unchanged', () => {
    const error = new TypeError('x');
    expect(coerceError(error)).toBe(error);
  });

  it.each([
    ['boom', 'non-error thrown: boom'],
    [42, 'non-error thrown: 42'],
    [undefined, 'non-error thrown: undefined'],
    [{ first_name: 'Jane' }, 'non-error thrown: object [object Object]'],
  ])('wraps %j, keeping it in cause', (value, message) => {
    const error = coerceError(value);
    expect(error.message).toBe(message);
    expect(error.cause).toBe(value);
  });
});
