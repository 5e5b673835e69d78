import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseBearer, bearerToken } from '../../src/sandbox/auth.js';
import { DEFAULT_FAULTS, latencyFor, mergeFaults, pickEventListFault, pickTransportFault } from '../../src/sandbox/faults.js';
import { compositeKey, erxCompatible, identitiesMatch } from '../../src/sandbox/identity-match.js';
import { decodeIterator, encodeIterator } from '../../src/sandbox/iterator.js';
import { createPrng, shuffleInPlace } from '../../src/sandbox/prng.js';
import { HAPPY_PATH, REJECTION_PATH, sandboxPath, stepDueAt, takesRejectionPath } from '../../src/sandbox/rules.js';
import { parseLimit } from '../../src/sandbox/routes-events.js';
import { errorsByField } from '../../src/sandbox/validation-errors.js';

const person = (first: string, middle: string | null | undefined, last: string) => ({
  first_name: first,
  middle_name: middle,
  last_name: last,
});

describe('rules', () => {
  it.each([
    ['identical names', person('Ann', 'B', 'Cole'), person('Ann', 'B', 'Cole'), true],
    ['case and spaces ignored', person('ann ', 'b', 'COLE'), person('Ann', 'B', 'Cole'), true],
    ['null vs missing middle', person('Ann', null, 'Cole'), person('Ann', undefined, 'Cole'), true],
    ['empty vs null middle', person('Ann', '', 'Cole'), person('Ann', null, 'Cole'), true],
    ['middle differs', person('Ann', 'B', 'Cole'), person('Ann', 'C', 'Cole'), false],
    ['middle only on one side', person('Ann', 'B', 'Cole'), person('Ann', null, 'Cole'), false],
    ['first differs', person('Ann', null, 'Cole'), person('Anne', null, 'Cole'), false],
    ['last differs', person('Ann', null, 'Cole'), person('Ann', null, 'Coles'), false],
    ['prescriber without names', person('Ann', null, 'Cole'), {}, false],
  ])('%s → rejection %s', (_, patient, prescriber, expected) => {
    expect(takesRejectionPath(patient, prescriber)).toBe(expected);
    expect(sandboxPath(patient, prescriber)).toBe(expected ? REJECTION_PATH : HAPPY_PATH);
  });

  it.each([
    [0, 5],
    [1, 10],
    [2, 15],
    [3, 20],
  ])('step %i is due %i minutes after receipt', (step, minutes) => {
    expect(stepDueAt(1_000, step)).toBe(1_000 + minutes * 60_000);
  });

  it('names the paths of the spec', () => {
    expect(HAPPY_PATH).toEqual(['accepted', 'ordered', 'dispensed', 'delivered']);
    expect(REJECTION_PATH).toEqual(['rejected']);
  });
});

describe('iterator', () => {
  const RUN = '0a1b2c3d';
  it.each([0, 1, 249, 250, 1_000_000, 2 ** 40])('round-trips position %i', (position) => {
    const iterator = encodeIterator(position, RUN);
    expect(iterator).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeIterator(iterator, RUN)).toBe(position);
  });

  it.each([
    ['empty', ''],
    ['garbage', 'not-an-iterator'],
    ['plain number', '250'],
    ['base64 of other text', Buffer.from('hello').toString('base64url')],
    ['negative', Buffer.from('p1:-1').toString('base64url')],
    ['leading zero', Buffer.from('p1:01').toString('base64url')],
    ['padding', `${encodeIterator(5, RUN)}=`],
    ['the old format', Buffer.from('p1:5').toString('base64url')],
    ['another run of the simulator', encodeIterator(5, 'ffffffff')],
    ['standard base64 chars', '+/+/'],
  ])('refuses %s', (_, iterator) => {
    expect(decodeIterator(iterator, RUN)).toBeNull();
  });
});

describe('identity matching', () => {
  const base = {
    patient_first_name: 'Ann',
    patient_last_name: 'Cole',
    patient_state: 'CA',
    patient_dob: '1980-01-02',
    erx_message_id: null as string | null,
    prescriber_npi: '1000000004',
    written_date: '2024-03-04',
    drug_ndc: '00002015204',
  };
  it.each([
    ['same', {}, true],
    ['case and whitespace differ', { patient_first_name: ' ANN ', patient_state: 'ca' }, true],
    ['erx only on one side', { erx_message_id: 'erx-1' }, true],
    ['different state', { patient_state: 'NY' }, false],
    ['different dob', { patient_dob: '1980-01-03' }, false],
    ['different npi', { prescriber_npi: '1000000012' }, false],
    ['different written date', { written_date: '2024-03-05' }, false],
    ['different ndc', { drug_ndc: '00002024304' }, false],
    ['different last name', { patient_last_name: 'Coles' }, false],
  ])('%s → %s', (_, change, expected) => {
    expect(identitiesMatch(base, { ...base, ...change })).toBe(expected);
  });

  it.each([
    [null, null, true],
    ['a', null, true],
    [undefined, 'a', true],
    ['a', 'a', true],
    ['a', ' a ', true],
    ['a', 'b', false],
  ])('erx %s vs %s → %s', (a, b, expected) => {
    expect(erxCompatible({ ...base, erx_message_id: a }, { ...base, erx_message_id: b })).toBe(expected);
  });

  it('composite key ignores erx_message_id', () => {
    expect(compositeKey({ ...base, erx_message_id: 'x' })).toBe(compositeKey(base));
  });
});

describe('prng', () => {
  it('is reproducible per seed and differs across seeds', () => {
    const a = createPrng(7);
    const b = createPrng(7);
    const c = createPrng(8);
    const seqA = Array.from({ length: 5 }, a);
    expect(Array.from({ length: 5 }, b)).toEqual(seqA);
    expect(Array.from({ length: 5 }, c)).not.toEqual(seqA);
    for (const x of seqA) expect(x >= 0 && x < 1).toBe(true);
  });

  it('shuffles reproducibly and keeps every item', () => {
    const one = shuffleInPlace([1, 2, 3, 4, 5, 6, 7, 8], createPrng(3));
    expect(shuffleInPlace([1, 2, 3, 4, 5, 6, 7, 8], createPrng(3))).toEqual(one);
    expect([...one].sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });
});

describe('faults', () => {
  const always = () => 0;
  const never = () => 0.999;
  it.each([
    [{}, always, null],
    [{ dropRate: 1 }, always, 'drop'],
    [{ hangRate: 1 }, always, 'hang'],
    [{ errorRate: 1 }, always, 'server-error'],
    [{ rateLimitRate: 1 }, always, 'rate-limit'],
    [{ errorRate: 0.5 }, never, null],
  ])('transport %j → %s', (patch, random, expected) => {
    expect(pickTransportFault(mergeFaults(DEFAULT_FAULTS, patch), random)).toBe(expected);
  });

  it.each([
    [{ truncatedRate: 1 }, 'truncated'],
    [{ wrongShapeRate: 1 }, 'wrong-shape'],
    [{}, null],
  ])('event list %j → %s', (patch, expected) => {
    expect(pickEventListFault(mergeFaults(DEFAULT_FAULTS, patch), always)).toBe(expected);
  });

  it('adds latency with jitter', () => {
    expect(latencyFor(mergeFaults(DEFAULT_FAULTS, { latencyMs: 100, latencyJitterMs: 50 }), () => 0.5)).toBe(125);
    expect(latencyFor(DEFAULT_FAULTS, () => 0.5)).toBe(0);
  });

  it.each([[{ errorRate: 2 }], [{ reorderWindow: -1 }], [{ iteratorMode: 'before' }], [{ bogus: 1 }]])('refuses %j', (patch) => {
    expect(() => mergeFaults(DEFAULT_FAULTS, patch)).toThrow(z.ZodError);
  });
});

describe('limit', () => {
  it.each([
    [null, 250],
    ['1', 1],
    ['250', 250],
    ['100', 100],
    ['0', undefined],
    ['251', undefined],
    ['abc', undefined],
    ['', undefined],
    ['1.5', undefined],
    ['-1', undefined],
    ['1e2', undefined],
  ])('%s → %s', (raw, expected) => {
    expect(parseLimit(raw)).toBe(expected);
  });
});

describe('bearer', () => {
  it.each([
    [undefined, undefined],
    ['Basic abc', undefined],
    ['Bearer', undefined],
    [`Bearer ${Buffer.from('nocolon').toString('base64')}`, undefined],
    [`Bearer ${Buffer.from(':secret').toString('base64')}`, undefined],
    [`Bearer ${bearerToken('k', 's:with:colons')}`, { key: 'k', secret: 's:with:colons' }],
    [`bearer ${bearerToken('k', 's')}`, { key: 'k', secret: 's' }],
  ])('%s → %j', (header, expected) => {
    expect(parseBearer(header)).toEqual(expected);
  });
});

describe('422 errors', () => {
  it('keys messages by dotted path and says "is required" for missing fields', () => {
    const schema = z.object({ a: z.object({ b: z.string(), c: z.number() }) });
    const body = { a: { c: 'x' } };
    const result = schema.safeParse(body);
    expect(result.success).toBe(false);
    const errors = errorsByField(result.error!.issues, body);
    expect(errors['a.b']).toEqual(['is required']);
    expect(errors['a.c']?.[0]).toMatch(/number/);
  });
});
