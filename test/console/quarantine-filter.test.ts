import { describe, expect, test } from 'vitest';
import { decodeCursor, encodeCursor, filterClause, filterParams, parseQuarantineFilter } from '../../src/console/quarantine-filter.js';

describe('parseQuarantineFilter', () => {
  test('reads every field and round-trips through filterParams', () => {
    const query = { feed: 'clinic_a', reason: 'unmatched', event_name: 'accepted', age: '7d', q: 'sub-1' };
    const { filter, problems } = parseQuarantineFilter(query);
    expect(problems).toEqual([]);
    expect(filter).toEqual({ feed: 'clinic_a', reason: 'unmatched', eventName: 'accepted', age: '7d', search: 'sub-1' });
    expect(filterParams(filter)).toEqual(query);
  });

  test.each([
    [{ feed: 'Clinic A' }, 'Feed: not a feed name'],
    [{ reason: 'nope' }, 'Reason: not a finding reason'],
    [{ event_name: 'a b' }, 'Event name: 1-64 of a-z 0-9 _ . -'],
    [{ age: '2y' }, 'Age: not one of the choices'],
    [{ q: 'x'.repeat(513) }, 'Search: an identifier of 1-512 visible characters'],
    [{ q: 'two words' }, 'Search: an identifier of 1-512 visible characters'],
  ])('refuses %j naming the field', (query, problem) => {
    expect(parseQuarantineFilter(query).problems).toEqual([problem]);
  });

  test('empty values are no filter', () => {
    expect(parseQuarantineFilter({ feed: '', q: '  ' })).toEqual({ filter: {}, problems: [] });
  });
});

describe('cursor', () => {
  test('round-trips and refuses anything else', () => {
    const cursor = { heldSince: '2024-12-10T10:00:00.123456Z', feed: 'clinic_a', key: 'evt-1' };
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
    for (const bad of [
      '',
      'not-base64!',
      Buffer.from('[1,2,3]').toString('base64url'),
      Buffer.from('["x","a","b"]').toString('base64url'),
    ]) {
      expect(decodeCursor(bad)).toBeUndefined();
    }
    expect(decodeCursor(Buffer.from(JSON.stringify(['2024-12-10T10:00:00Z', 'Bad Feed', 'k'])).toString('base64url'))).toBeUndefined();
  });
});

describe('filterClause', () => {
  test('binds every value as a parameter, never in the SQL text', () => {
    const now = new Date('2024-12-20T00:00:00Z');
    const { where, params } = filterClause(
      { feed: "a'; drop table x; --", reason: 'unmatched', eventName: 'accepted', age: '1d', search: "x' or 1=1" },
      '"intake_sync"',
      now,
    );
    expect(where).not.toContain('drop');
    expect(where).not.toContain('1=1');
    expect(params).toEqual(["a'; drop table x; --", 'unmatched', 'accepted', '2024-12-19T00:00:00.000Z', "x' or 1=1"]);
    expect(where).toContain('"intake_sync".prescription_status');
  });

  test('no filter is true', () => {
    expect(filterClause({}, '"s"', new Date())).toEqual({ where: 'true', params: [] });
  });
});
