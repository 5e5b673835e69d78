import { describe, expect, test } from 'vitest';
import { compareSnapshots, isExact } from '../support/faults/compare.js';
import { finalStageUser, isRootUser } from '../support/faults/dockerfile.js';
import { toEntry } from '../support/faults/feed-reader.js';
import { locateWindow } from '../support/faults/feed-positions.js';
import { findLeaks, secretNeedles } from '../support/faults/leaks.js';
import { prescriptionsForFeed } from '../support/faults/local-prescriptions.js';
import { expectedFromFeed } from '../support/faults/oracle.js';
import { OracleScopeError } from '../support/faults/oracle-scope-error.js';
import type { StoreSnapshot } from '../support/faults/store.js';
import { formatSummary } from '../support/faults/summary.js';

// The judges of the fault scenarios are tested first: a harness that cannot
// fail would make every scenario pass.

const identity = (n: number) => ({
  patient_first_name: `Testpat${n}x`,
  patient_last_name: 'Synthetic',
  patient_state: 'CA',
  patient_dob: '1950-01-01',
  erx_message_id: null,
  prescriber_npi: '1234567893',
  written_date: '2024-01-01',
  drug_ndc: '00002015204',
});
const event = (id: string, name: string, n: number, minute: number) =>
  toEntry({
    id,
    name,
    prescription_identity: identity(n),
    pharmacy_npi: '1689411712',
    occurred_at: `2025-01-01T00:${String(minute).padStart(2, '0')}:00.000Z`,
    api_version: '2024-12-10',
    subscription_id: 'sub',
    payload: {},
  });

describe('feed oracle', () => {
  const feed = [
    event('e1', 'accepted', 1, 1),
    event('e2', 'rejected', 2, 2),
    event('e4', 'dispensed', 1, 4),
    event('e3', 'ordered', 1, 3), // late: does not move dispensed back
    event('e4', 'dispensed', 1, 4), // duplicate id
    event('e5', 'refilled', 1, 5), // unknown name: history only
  ];
  const local = prescriptionsForFeed(feed, 'rx');

  test('one local prescription per identity, in order of appearance', () => {
    expect(local.map((p) => p.external_id)).toEqual(['rx-000001', 'rx-000002']);
  });

  test('statuses move forward only, duplicates count once, unknown names change nothing', () => {
    const expected = expectedFromFeed(feed, local);
    expect(expected.prescriptions).toEqual({
      'rx-000001': { status: 'dispensed', statusOccurredAt: '2025-01-01T00:04:00.000Z', statusEventId: 'e4' },
      'rx-000002': { status: 'rejected', statusOccurredAt: '2025-01-01T00:02:00.000Z', statusEventId: 'e2' },
    });
    expect(Object.keys(expected.events).sort()).toEqual(['e1', 'e2', 'e3', 'e4', 'e5']);
    expect(expected.events.e5).toEqual({ name: 'refilled', externalId: 'rx-000001' });
  });

  test.each([
    ['a malformed entry', [toEntry({ name: 'accepted' })]],
    ['an unmatched event', [event('e9', 'accepted', 9, 1)]],
    ['a prescription both rejected and delivered', [event('e1', 'rejected', 1, 1), event('e2', 'delivered', 1, 2)]],
  ])('refuses to judge %s (a clean run is the reference there)', (_label, entries) => {
    expect(() => expectedFromFeed(entries, local)).toThrow(OracleScopeError);
  });
});

describe('snapshot comparison', () => {
  const base: StoreSnapshot = {
    prescriptions: { a: { status: 'delivered', statusOccurredAt: null, statusEventId: 'e2' } },
    events: { e1: { name: 'accepted', externalId: 'a' }, e2: { name: 'delivered', externalId: 'a' } },
    quarantine: { q1: { reason: 'malformed', eventId: null } },
  };
  test.each([
    ['identical', base, { lost: 0, duplicated: 0, changed: 0 }],
    ['an event missing', { ...base, events: { e1: base.events.e1! } }, { lost: 1, duplicated: 0, changed: 0 }],
    [
      'an extra event',
      { ...base, events: { ...base.events, e3: { name: 'x', externalId: null } } },
      { lost: 0, duplicated: 1, changed: 0 },
    ],
    [
      'a status moved back',
      { ...base, prescriptions: { a: { status: 'accepted', statusOccurredAt: null, statusEventId: 'e1' } } },
      { lost: 0, duplicated: 0, changed: 1 },
    ],
    [
      'a quarantine reason changed',
      { ...base, quarantine: { q1: { reason: 'unmatched', eventId: null } } },
      { lost: 0, duplicated: 0, changed: 1 },
    ],
  ])('%s', (_label, actual, counts) => {
    const d = compareSnapshots(base, actual);
    expect({ lost: d.lost.length, duplicated: d.duplicated.length, changed: d.changed.length }).toEqual(counts);
    expect(isExact(d)).toBe(counts.lost + counts.duplicated + counts.changed === 0);
  });
});

describe('locating an iterator window in the feed', () => {
  const feed = ['a', 'b', 'c', 'b', 'c', 'd'].map((id) => toEntry({ id }));
  test.each([
    [['b', 'c', 'd'], 3],
    [['b', 'c'], 1],
    [['d', 'e'], 5], // runs past the recorded end
    [[], 6],
    [['x'], undefined],
  ])('window %j is at %s', (ids, position) => {
    expect(
      locateWindow(
        feed,
        ids.map((id) => toEntry({ id })),
      ),
    ).toBe(position);
  });
});

describe('leak scan', () => {
  const needles = [{ label: 'patient first name', value: 'Testpata' }, ...secretNeedles('k', 's3cr3t-value')];
  test.each([
    ['a name as a JSON value', '{"msg":"x","n":"Testpata"}', ['patient first name']],
    ['a longer name that contains it', '{"n":"Testpatab"}', []],
    ['the secret inside a URL', 'GET http://h/?s3cr3t-value', ['api secret']],
    ['the bearer token', `Bearer ${Buffer.from('k:s3cr3t-value').toString('base64')}`, ['bearer token']],
    ['clean output', '{"msg":"page applied","events":250}', []],
  ])('%s', (_label, text, labels) => {
    const leaks = findLeaks([{ source: 'w:stderr', kind: 'log', text }], needles);
    expect(leaks.map((l) => l.needle)).toEqual(labels);
  });
  test('command output (stdout of list commands) is not a log and is not scanned', () => {
    expect(findLeaks([{ source: 'c:stdout', kind: 'output', text: 'Testpata' }], needles)).toEqual([]);
  });
});

test('summary table', () => {
  expect(formatSummary([{ scenario: '1 kill', trials: 25, lost: 0, duplicated: 0, result: 'pass' }])).toBe(
    '| Scenario | Trials | Lost | Duplicated | Result | Notes |\n| --- | --- | --- | --- | --- | --- |\n| 1 kill | 25 | 0 | 0 | pass |  |\n',
  );
});

describe('Dockerfile final stage user', () => {
  test.each([
    ['FROM node:20 AS build\nUSER node\nFROM node:20-slim\nCMD ["x"]\n', undefined],
    ['FROM node:20 AS build\nFROM node:20-slim\nUSER node\n', 'node'],
    ['FROM node:20-slim\nUSER app:app\nUSER root\n', 'root'],
    ['FROM node:20-slim\n# USER root\nUSER 10001:10001\n', '10001:10001'],
  ])('%j runs as %s', (text, user) => {
    expect(finalStageUser(text)).toBe(user);
  });
  test.each([
    ['root', true],
    ['0:0', true],
    ['node', false],
    ['10001', false],
  ])('%s is root: %s', (user, root) => {
    expect(isRootUser(user)).toBe(root);
  });
});
