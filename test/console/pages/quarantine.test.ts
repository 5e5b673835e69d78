import { describe, expect, it } from 'vitest';
import { dismissedAllMessage } from '../../../src/console/pages/dismiss-all.js';
import { PAGE_SIZE, pageLinks, subscriptionCell, TOTAL_AT_MOST, totalText } from '../../../src/console/pages/quarantine.js';

describe('the quarantine list', () => {
  it.each([
    ['first', PAGE_SIZE, { previous: false, next: false }],
    ['first', PAGE_SIZE + 1, { previous: false, next: true }],
    ['after', 3, { previous: true, next: false }],
    ['after', PAGE_SIZE + 1, { previous: true, next: true }],
    ['before', PAGE_SIZE, { previous: false, next: true }],
    ['before', PAGE_SIZE + 1, { previous: true, next: true }],
  ] as const)('page links: %s with %i rows read', (direction, rows, links) => {
    expect(pageLinks(direction, rows)).toEqual(links);
  });

  it.each([
    [0, '0 open findings match'],
    [1, '1 open finding matches'],
    [TOTAL_AT_MOST, `${TOTAL_AT_MOST} open findings match`],
    [TOTAL_AT_MOST + 1, `More than ${TOTAL_AT_MOST} open findings match`],
  ])('the total %i in words', (total, text) => {
    expect(totalText(total)).toBe(text);
  });

  it('links a subscription to its group, keeping the filter and starting at the first page', () => {
    expect(subscriptionCell({ feed: 'clinic_a', reason: 'unmatched' }, 'sub-1').text).toContain(
      'href="/quarantine?feed=clinic_a&amp;reason=unmatched&amp;q=sub-1"',
    );
    expect(subscriptionCell({ search: 'sub-1' }, 'sub-1').text).not.toContain('href');
    expect(subscriptionCell({}, null).text).toContain('none (malformed)');
  });
});

describe('what Dismiss all matching says it did', () => {
  it.each([
    [7, 7, 0, 'Dismissed 7 of the 7 findings counted (not_ours).'],
    [
      7,
      6,
      1,
      'Dismissed 6 of the 7 findings counted (not_ours). 1 of those counted had closed meanwhile (matched, resolved or dismissed by someone else) and were not touched. 1 matching finding arrived after the count and was left open: nobody had seen it; review below.',
    ],
    [
      3,
      3,
      2,
      'Dismissed 3 of the 3 findings counted (not_ours). 2 matching findings arrived after the count and were left open: nobody had seen them; review below.',
    ],
  ])('counted %i, dismissed %i, left open %i', (counted, dismissed, leftOpen, message) => {
    expect(dismissedAllMessage(counted, dismissed, leftOpen, 'not_ours')).toBe(message);
  });
});
