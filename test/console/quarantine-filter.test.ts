import { describe, expect, test } from 'vitest';
import {
  decodeCursor,
  describeFilter,
  encodeCursor,
  filterArguments,
  filterParams,
  heldBefore,
  parseQuarantineFilter,
} from '../../src/console/quarantine-filter.js';

// the finding reasons as quarantine_reasons() returns them (the console reads them from SQL)
const REASONS = ['unmatched', 'ambiguous', 'malformed', 'unsupported_version'];

describe('parseQuarantineFilter', () => {
  test('reads every field and round-trips through filterParams', () => {
    const query = { feed: 'clinic_a', reason: 'unmatched', event_name: 'accepted', age: '7d', q: 'sub-1' };
    const { filter, problems } = parseQuarantineFilter(query, REASONS);
    expect(problems).toEqual([]);
    expect(filter).toEqual({ feed: 'clinic_a', reason: 'unmatched', eventName: 'accepted', age: '7d', search: 'sub-1' });
    expect(filterParams(filter)).toEqual(query);
  });

  test.each(REASONS)('accepts every reason the SQL lists: %s (the Feeds page links to each)', (reason) => {
    expect(parseQuarantineFilter({ reason }, REASONS)).toEqual({ filter: { reason }, problems: [] });
  });

  test.each([
    [{ feed: 'Clinic A' }, 'Feed: not a feed name'],
    [{ reason: 'nope' }, 'Finding reason: one of unmatched, ambiguous, malformed, unsupported_version'],
    [{ event_name: 'a b' }, 'Event name: 1-64 of a-z 0-9 _ . -'],
    [{ age: '2y' }, 'Age: not one of the choices'],
    [{ q: 'x'.repeat(513) }, 'Search: an identifier of 1-512 visible characters'],
    [{ q: 'two words' }, 'Search: an identifier of 1-512 visible characters'],
  ])('refuses %j naming the field', (query, problem) => {
    expect(parseQuarantineFilter(query, REASONS).problems).toEqual([problem]);
  });

  test('empty values are no filter', () => {
    expect(parseQuarantineFilter({ feed: '', q: '  ' }, REASONS)).toEqual({ filter: {}, problems: [] });
  });
});

describe('the filter as the SQL functions take it, and in words', () => {
  test('filterArguments: feed, reason, event name, held_before, search; absent ones null', () => {
    expect(filterArguments({ feed: 'a', reason: 'unmatched', eventName: 'x', search: 's' }, '2024-12-19T00:00:00.000Z')).toEqual({
      feed: 'a',
      reason: 'unmatched',
      eventName: 'x',
      heldBefore: '2024-12-19T00:00:00.000Z',
      search: 's',
    });
    expect(filterArguments({}, null)).toEqual({ feed: null, reason: null, eventName: null, heldBefore: null, search: null });
  });

  test('heldBefore: now minus the age, or null', () => {
    expect(heldBefore({ age: '1d' }, Date.parse('2024-12-20T00:00:00Z'))).toBe('2024-12-19T00:00:00.000Z');
    expect(heldBefore({}, 0)).toBeNull();
  });

  test('describeFilter', () => {
    expect(describeFilter({})).toBe('every open finding your role can see');
    expect(describeFilter({ feed: 'a', reason: 'unsupported_version', age: '7d' })).toBe(
      'feed a, finding reason unsupported_version, held at least 7d',
    );
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
