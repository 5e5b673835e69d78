import { describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { parseFeedsFile } from '../../src/config/feeds-file.js';
import { retentionPolicyFrom, retentionSettingsFrom } from '../../src/daemon/worker-settings.js';

const DAY = 86_400_000;
const feed = (retain: unknown) =>
  JSON.stringify([{ name: 'a', base_url: 'https://op.example/intake_api/2024-12-10', api_key: 'k', api_secret: 's', retain }]);

describe('retention settings', () => {
  test('the defaults', () => {
    expect(retentionPolicyFrom(loadConfig({}))).toEqual({
      open_findings: 90 * DAY,
      quarantine: 30 * DAY,
      event_bodies: 30 * DAY,
      events: 366 * DAY,
      outbox_bodies: 30 * DAY,
      terminal_identities: 366 * DAY,
      status_changes: 90 * DAY,
      audit: 6 * 366 * DAY,
    });
    expect(retentionSettingsFrom(loadConfig({})).intervalMs).toBe(3_600_000);
  });

  test("a feed's FEEDS_FILE `retain` overrides the variables, class by class", () => {
    const config = loadConfig({ RETAIN_EVENT_BODIES: '7d', RETAIN_AUDIT: 'forever' });
    const [parsed] = parseFeedsFile(feed({ event_bodies: '1s', status_changes: 'forever' }), 'feeds.json', {});
    const policy = retentionPolicyFrom(config, parsed!.retain);
    expect(policy).toMatchObject({ event_bodies: 1_000, status_changes: null, audit: null, quarantine: 30 * DAY });
  });

  test('RETAIN_TERMINAL_IDENTITIES: a duration or forever, overridable per feed like the others', () => {
    expect(retentionPolicyFrom(loadConfig({ RETAIN_TERMINAL_IDENTITIES: 'forever' })).terminal_identities).toBeNull();
    expect(retentionPolicyFrom(loadConfig({ RETAIN_TERMINAL_IDENTITIES: '90d' })).terminal_identities).toBe(90 * DAY);
    const [parsed] = parseFeedsFile(feed({ terminal_identities: '30d' }), 'feeds.json', {});
    expect(retentionPolicyFrom(loadConfig({ RETAIN_TERMINAL_IDENTITIES: 'forever' }), parsed!.retain).terminal_identities).toBe(30 * DAY);
  });

  test.each([
    [{ event_bodies: '30 days' }, /FEEDS_FILE: feeds.json \[0\]\.retain\.event_bodies: must be a duration/],
    [{ bodies: '30d' }, /FEEDS_FILE: feeds.json \[0\]\.retain: .*bodies/],
    ['30d', /FEEDS_FILE: feeds.json \[0\]\.retain: must be an object of durations/],
  ])('a bad `retain` %j is refused naming the field', (retain, message) => {
    expect(() => parseFeedsFile(feed(retain), 'feeds.json', {})).toThrow(message);
  });

  test.each([
    ['RETAIN_STATUS_CHANGES', '0s', /RETAIN_STATUS_CHANGES: must be a duration/],
    ['RETAIN_AUDIT', '6 years', /RETAIN_AUDIT: must be a duration/],
    ['RETAIN_TERMINAL_IDENTITIES', '1 year', /RETAIN_TERMINAL_IDENTITIES: must be a duration/],
    ['RETAIN_TERMINAL_IDENTITIES', '-1d', /RETAIN_TERMINAL_IDENTITIES: must be a duration/],
    ['RETENTION_INTERVAL', 'forever', /RETENTION_INTERVAL: must be a duration from 1s to 7d/],
  ])('%s=%j is refused naming the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });
});
