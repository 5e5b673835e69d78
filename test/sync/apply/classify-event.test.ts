import { describe, expect, test } from 'vitest';
import { classifyEvent } from '../../../src/sync/apply/classify-event.js';
import { identityKey } from '../../../src/sync/matching/identity-key.js';
import { event, identity } from '../../support/sync/fixtures.js';

const good = () => event('ev-1', 'accepted', '2024-12-10T10:00:00Z');
const without = (key: string) => {
  const e = good();
  delete e[key];
  return e;
};

describe('classifyEvent: well-formed', () => {
  test('derives key, erx, rank and a normalised occurred_at', () => {
    const raw = { ...good(), occurred_at: '2024-12-10T05:00:00-05:00', prescription_identity: identity({ erx_message_id: ' E1 ' }) };
    const result = classifyEvent(raw);
    expect(result).toMatchObject({
      ok: true,
      key: identityKey(identity()),
      erx: 'E1',
      rank: 1,
      occurredAt: '2024-12-10T10:00:00.000Z',
    });
  });

  test.each([
    ['2024-12-10T10:00:00', '2024-12-10T10:00:00.000Z'],
    ['2024-12-10T10:00:00.5', '2024-12-10T10:00:00.500Z'],
    ['2024-12-10', '2024-12-10T00:00:00.000Z'],
    ['2024-12-10T10:00:00+01:00', '2024-12-10T09:00:00.000Z'],
  ])('occurred_at %j is read as %j whatever the host time zone', (occurredAt, iso) => {
    expect(classifyEvent({ ...good(), occurred_at: occurredAt })).toMatchObject({ ok: true, occurredAt: iso });
  });

  test('an unknown name is well-formed with no rank', () => {
    expect(classifyEvent({ ...good(), name: 'on_hold' })).toMatchObject({ ok: true, rank: null });
  });

  test.each(['2024-12-10', '2025-06-01'])('api_version %s is applicable (no hold)', (apiVersion) => {
    expect(classifyEvent({ ...good(), api_version: apiVersion })).toMatchObject({ ok: true, hold: null });
  });

  test.each(['2026-01-01', '2024-12-09', '', 'v2'])('api_version %j is held as unsupported_version, naming the version', (apiVersion) => {
    expect(classifyEvent({ ...good(), api_version: apiVersion })).toMatchObject({
      ok: true,
      hold: {
        reason: 'unsupported_version',
        detail: `api_version ${JSON.stringify(apiVersion)} is not one this build reads (2024-12-10, 2025-06-01)`,
      },
    });
  });

  test('unknown extra fields pass', () => {
    expect(classifyEvent({ ...good(), shiny_new_field: 1 })).toMatchObject({ ok: true });
  });
});

describe('classifyEvent: malformed, with a detail naming the path and rule', () => {
  test.each([
    ['missing id', without('id'), /^id: /],
    ['empty id', { ...good(), id: '' }, /^id: /],
    ['numeric id', { ...good(), id: 42 }, /^id: .*expected string/],
    ['id too long for an index', { ...good(), id: 'x'.repeat(513) }, /^id: longer than 512/],
    ['missing name', without('name'), /^name: /],
    ['missing prescription_identity', without('prescription_identity'), /^prescription_identity: /],
    ['identity not an object', { ...good(), prescription_identity: 'Ada' }, /^prescription_identity: /],
    [
      'identity field of wrong type',
      { ...good(), prescription_identity: { ...identity(), patient_dob: 19901210 } },
      /^prescription_identity\.patient_dob: /,
    ],
    [
      'identity field missing',
      { ...good(), prescription_identity: { ...identity(), drug_ndc: undefined } },
      /^prescription_identity\.drug_ndc: /,
    ],
    ['unparseable occurred_at', { ...good(), occurred_at: 'yesterday' }, /^occurred_at: must be a timestamp/],
    ['occurred_at beyond year 9999', { ...good(), occurred_at: '+010000-01-01T00:00:00Z' }, /^occurred_at: year outside/],
    ['missing payload', without('payload'), /^payload: /],
    ['subscription_id of wrong type', { ...good(), subscription_id: null }, /^subscription_id: /],
    ['array', [good()], /^\(event\): must be a JSON object, got array/],
    ['string', 'accepted', /^\(event\): must be a JSON object, got string/],
    ['null', null, /^\(event\): must be a JSON object, got null/],
    ['number', 7, /^\(event\): must be a JSON object, got number/],
  ])('%s', (_label, raw, detail) => {
    const result = classifyEvent(raw);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.reason).toBe('malformed');
      expect(result.detail).toMatch(detail);
    }
  });

  test('the detail lists every failing path and carries no values', () => {
    const raw = { ...good(), id: 1, prescription_identity: { ...identity(), patient_first_name: 99, patient_last_name: undefined } };
    const result = classifyEvent(raw);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.detail).toContain('id: ');
    expect(result.detail).toContain('prescription_identity.patient_first_name: ');
    expect(result.detail).toContain('prescription_identity.patient_last_name: ');
    for (const value of ['99', 'Ada', 'Lovelace', '1990-12-10']) expect(result.detail).not.toContain(value);
  });
});
