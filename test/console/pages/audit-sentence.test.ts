import { describe, expect, it } from 'vitest';
import { auditDetails, auditSentence } from '../../../src/console/pages/audit-sentence.js';

const row = (action: string, detail: unknown, subject: string | null = 'evt-1') => ({
  actor: 'console_a',
  on_behalf_of: null,
  action,
  feed: 'clinic_a',
  subject,
  detail,
});

describe('audit entries in words', () => {
  it.each([
    [
      row('quarantine.dismiss', { reason: 'not_ours', finding_reason: 'unmatched', subscription_id: 'sub-1', dismiss_all: true }),
      'console_a dismissed finding evt-1 in feed clinic_a as not_ours (Dismiss all matching).',
      [
        ['Finding reason', 'unmatched'],
        ['Subscription', 'sub-1'],
      ],
    ],
    [
      row('quarantine.dismiss', { reason: 'duplicate', finding_reason: 'ambiguous', subscription_id: 'sub-1', with_event_id: 'evt-0' }),
      'console_a dismissed finding evt-1 in feed clinic_a as duplicate (the whole subscription, with finding evt-0).',
      [
        ['Finding reason', 'ambiguous'],
        ['Subscription', 'sub-1'],
      ],
    ],
    [
      row('quarantine.resolve', { external_id: 'rx-1', events_applied: 2, subscription_id: 'sub-1', reason: 'unmatched' }),
      'console_a resolved finding evt-1 in feed clinic_a to prescription rx-1, applying 2 events.',
      [
        ['Finding reason', 'unmatched'],
        ['Subscription', 'sub-1'],
      ],
    ],
    [
      row('quarantine.reveal_requested', { xact: '123456', role: 'console_a' }),
      'console_a asked to reveal the identity held by finding evt-1 in feed clinic_a.',
      [],
    ],
    [row('some.new_action', { a_b: { c: 1, xact: 9 } }, null), 'console_a: some new action in feed clinic_a.', [['A b', 'c 1']]],
  ])('%j', (r, sentence, details) => {
    expect(auditSentence(r)).toEqual({ sentence, details });
  });

  it('never shows an internal id nor JSON', () => {
    const shown = JSON.stringify(auditDetails({ xact: '42', backend_pid: 7, nested: { xact: 1, k: [1, 2] } }));
    expect(shown).not.toContain('42');
    expect(shown).not.toMatch(/xact|\{"/);
    expect(auditDetails({ nested: { k: [1, 2] } })).toEqual([['Nested', 'k 1, 2']]);
  });

  it('names who acted for whom', () => {
    expect(auditSentence({ ...row('quarantine.show', {}), on_behalf_of: 'ada@example' }).sentence).toBe(
      'console_a (for ada@example) was shown the identity held by finding evt-1 in feed clinic_a.',
    );
  });
});
