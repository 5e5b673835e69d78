import { describe, expect, it } from 'vitest';
import { type FindingRow, groupNote } from '../../src/console/pages/quarantine.js';

const finding = (subscription: string | null): FindingRow => ({
  feed: 'clinic_a',
  event_id: 'evt-1',
  reason: 'unmatched',
  event_name: 'accepted',
  held_since: new Date(0),
  held_since_key: '1970-01-01T00:00:00.000000Z',
  detail: 'no match',
  seen_count: 1,
  quarantine_key: 'evt-1',
  subscription_id: subscription,
});

describe('the quarantine group note', () => {
  it('links a subscription group to all its findings, keeping the filter and dropping the page position', () => {
    const note = groupNote({ feed: 'clinic_a', reason: 'unmatched' }, [finding('sub-1'), finding('sub-1')], true).text;
    expect(note).toContain('2 on this page');
    expect(note).toContain('href="/quarantine?feed=clinic_a&amp;reason=unmatched&amp;q=sub-1"');
    expect(note).toContain('it may continue on later pages');
  });

  it('says nothing of later pages on the last page', () => {
    expect(groupNote({}, [finding('sub-1')], false).text).not.toContain('later pages');
  });

  it('has no link for malformed findings (no subscription) or when the search is that subscription already', () => {
    expect(groupNote({}, [finding(null)], true).text).not.toContain('href');
    expect(groupNote({ search: 'sub-1' }, [finding('sub-1')], true).text).not.toContain('href');
  });
});
