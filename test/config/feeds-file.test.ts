import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { parseFeedsFile, resolveFeeds, selectFeed } from '../../src/config/feeds-file.js';

const FILE = '/etc/intake-sync/feeds.json';
const ENV = { CLINIC_B_SECRET: 'b-secret-value' };
const feed = (overrides: Record<string, unknown> = {}) => ({
  name: 'clinic-a',
  base_url: 'https://operator.example/intake_api/2024-12-10',
  api_key: 'key-a',
  api_secret: 'secret-a',
  ...overrides,
});

describe('parseFeedsFile', () => {
  test('reads the feeds, resolving env: values from the environment', () => {
    const text = JSON.stringify([feed(), feed({ name: 'clinic-b', api_key: 'key-b', api_secret: 'env:CLINIC_B_SECRET' })]);
    expect(parseFeedsFile(text, FILE, ENV)).toEqual([
      { name: 'clinic-a', baseUrl: 'https://operator.example/intake_api/2024-12-10', apiKey: 'key-a', apiSecret: 'secret-a' },
      { name: 'clinic-b', baseUrl: 'https://operator.example/intake_api/2024-12-10', apiKey: 'key-b', apiSecret: 'b-secret-value' },
    ]);
  });

  test('base URLs are read without trailing slashes, from the file and the single-feed variable alike', () => {
    // one spelling: feed_sources.base_url and outbox.sent_through are compared as text
    expect(parseFeedsFile(JSON.stringify([feed({ base_url: 'https://op.example/intake_api/2025-06-01//' })]), FILE, {})[0]?.baseUrl).toBe(
      'https://op.example/intake_api/2025-06-01',
    );
    const env = { INTAKE_API_BASE_URL: 'https://op.example/intake_api/2024-12-10/', INTAKE_API_KEY: 'k', INTAKE_API_SECRET: 's' };
    expect(resolveFeeds(loadConfig(env), env)[0]?.baseUrl).toBe('https://op.example/intake_api/2024-12-10');
  });

  test('http:// is accepted for a loopback host only', () => {
    expect(parseFeedsFile(JSON.stringify([feed({ base_url: 'http://127.0.0.1:9/intake_api/2024-12-10' })]), FILE, {})[0]?.baseUrl).toBe(
      'http://127.0.0.1:9/intake_api/2024-12-10',
    );
  });

  // each bad file: the message names the file and the field path, never a value
  test.each<[string, string, string]>([
    ['not JSON', '{', `FEEDS_FILE: ${FILE} is not valid JSON`],
    ['not an array', JSON.stringify(feed()), `FEEDS_FILE: ${FILE}: must be a JSON array of feeds`],
    ['empty', '[]', `FEEDS_FILE: ${FILE}: must name at least one feed`],
    ['entry not an object', '[1]', `FEEDS_FILE: ${FILE} [0]: must be an object`],
    ['bad name', JSON.stringify([feed({ name: 'Clinic A' })]), `FEEDS_FILE: ${FILE} [0].name: must be 1-64 of a-z 0-9 _ -`],
    ['repeated name', JSON.stringify([feed(), feed()]), `FEEDS_FILE: ${FILE} [1].name: repeats the name of feed [0]`],
    ['missing secret', JSON.stringify([feed({ api_secret: undefined })]), `FEEDS_FILE: ${FILE} [0].api_secret: must be a string`],
    ['empty key', JSON.stringify([feed({ api_key: '' })]), `FEEDS_FILE: ${FILE} [0].api_key: must not be empty`],
    [
      'unset env var',
      JSON.stringify([feed({ api_secret: 'env:NOPE_SECRET' })]),
      `FEEDS_FILE: ${FILE} [0].api_secret: names the environment variable NOPE_SECRET, which is not set`,
    ],
    [
      'not a URL',
      JSON.stringify([feed({ base_url: 'operator.example' })]),
      `FEEDS_FILE: ${FILE} [0].base_url: must be an absolute http(s) URL`,
    ],
    [
      'http to a remote host',
      JSON.stringify([feed({ base_url: 'http://operator.example/x' })]),
      `FEEDS_FILE: ${FILE} [0].base_url: must use https:// (http:// is allowed only for a loopback host)`,
    ],
    [
      'no /intake_api/<version>',
      JSON.stringify([feed({ base_url: 'https://operator.example/api' })]),
      `FEEDS_FILE: ${FILE} [0].base_url: must end in /intake_api/<version> (this build reads 2024-12-10, 2025-06-01)`,
    ],
    [
      'a version this build does not read',
      JSON.stringify([feed({ base_url: 'https://operator.example/intake_api/2030-01-01' })]),
      `FEEDS_FILE: ${FILE} [0].base_url: names API version 2030-01-01, which this build does not read (it reads 2024-12-10, 2025-06-01)`,
    ],
    [
      'userinfo',
      JSON.stringify([feed({ base_url: 'https://user:pw@operator.example/intake_api/2024-12-10' })]),
      `FEEDS_FILE: ${FILE} [0].base_url: must not carry a user or password (the credentials are the API key and secret)`,
    ],
    ['unknown field', JSON.stringify([{ ...feed(), token: 'x' }]), `FEEDS_FILE: ${FILE} [0]: Unrecognized key: "token"`],
  ])('%s', (_label, text, expected) => {
    let error: unknown;
    try {
      parseFeedsFile(text, FILE, ENV);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(expected);
    expect((error as Error).message).not.toMatch(/secret-a|key-a|b-secret-value/);
  });
});

describe('resolveFeeds', () => {
  const dir = mkdtempSync(join(tmpdir(), 'feeds-file-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('without FEEDS_FILE the single-feed variables are one feed, named by FEED_NAME (default `default`)', () => {
    const env = { INTAKE_API_BASE_URL: 'https://op.example/intake_api/2024-12-10', INTAKE_API_KEY: 'k', INTAKE_API_SECRET: 's' };
    expect(resolveFeeds(loadConfig(env), env)).toEqual([
      { name: 'default', baseUrl: 'https://op.example/intake_api/2024-12-10', apiKey: 'k', apiSecret: 's' },
    ]);
    expect(resolveFeeds(loadConfig({ ...env, FEED_NAME: 'main' }), env)[0]?.name).toBe('main');
    expect(resolveFeeds(loadConfig({}), {})).toEqual([{ name: 'default', baseUrl: undefined, apiKey: undefined, apiSecret: undefined }]);
  });

  test('FEEDS_FILE is read from disk; a missing file is named', () => {
    const path = join(dir, 'feeds.json');
    writeFileSync(path, JSON.stringify([feed(), feed({ name: 'clinic-b' })]));
    expect(resolveFeeds(loadConfig({ FEEDS_FILE: path }), {}).map((f) => f.name)).toEqual(['clinic-a', 'clinic-b']);
    expect(() => resolveFeeds(loadConfig({ FEEDS_FILE: join(dir, 'absent.json') }), {})).toThrow(
      /FEEDS_FILE: cannot read .*absent\.json \(no such file: give the path of the JSON file listing the feeds\)/,
    );
  });

  test('FEED_NAME beside FEEDS_FILE is refused, naming it', () => {
    const path = join(dir, 'one.json');
    writeFileSync(path, JSON.stringify([feed()]));
    expect(() => resolveFeeds(loadConfig({ FEEDS_FILE: path, FEED_NAME: 'x' }), { FEED_NAME: 'x' })).toThrow(
      /FEED_NAME: must not be set with FEEDS_FILE/,
    );
  });

  test('FEEDS_FILE beside INTAKE_API_* is refused, naming each variable', () => {
    expect(() =>
      loadConfig({ FEEDS_FILE: '/x.json', INTAKE_API_BASE_URL: 'https://op.example/x', INTAKE_API_KEY: 'k', INTAKE_API_SECRET: 's' }),
    ).toThrow(
      /INTAKE_API_BASE_URL: must not be set with FEEDS_FILE[\s\S]*INTAKE_API_KEY: must not be set[\s\S]*INTAKE_API_SECRET: must not be set/,
    );
  });
});

describe('selectFeed (--feed)', () => {
  const feeds = parseFeedsFile(JSON.stringify([feed(), feed({ name: 'clinic-b' })]), FILE, {});
  test.each<[string, string | undefined, readonly { name: string }[], string]>([
    ['the named feed', 'clinic-b', feeds, 'clinic-b'],
    ['the only feed without --feed', undefined, feeds.slice(0, 1), 'clinic-a'],
    ['several feeds without --feed: the feed named default', undefined, [...feeds, { ...feeds[0]!, name: 'default' }], 'default'],
  ])('%s', (_label, requested, list, expected) => {
    expect(selectFeed(list as typeof feeds, requested).name).toBe(expected);
  });
  test.each<[string, string | undefined, RegExp]>([
    [
      'several feeds, none named default, need --feed',
      undefined,
      /--feed: required when several feeds are configured and none is named default \(known feeds: clinic-a, clinic-b\)/,
    ],
    ['an unknown feed', 'clinic-z', /--feed: "clinic-z" is not a configured feed \(known feeds: clinic-a, clinic-b\)/],
    ['a name the rule refuses is not echoed', 'Bad Name', /--feed: the name given is not a configured feed/],
  ])('%s', (_label, requested, message) => {
    expect(() => selectFeed(feeds, requested)).toThrow(message);
  });
});

describe('INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG with FEEDS_FILE', () => {
  test.each<[string, Record<string, string>, RegExp | null]>([
    [
      'FEEDS_FILE stands in for INTAKE_API_BASE_URL (each feed names its base_url)',
      { FEEDS_FILE: '/x.json', DATABASE_URL: 'postgres://h/db' },
      null,
    ],
    ['DATABASE_URL is still required', { FEEDS_FILE: '/x.json' }, /DATABASE_URL: is required here/],
    ['without FEEDS_FILE, INTAKE_API_BASE_URL is required', { DATABASE_URL: 'postgres://h/db' }, /INTAKE_API_BASE_URL: is required here/],
  ])('%s', async (_label, env, refused) => {
    const { decideRunMode } = await import('../../src/daemon/demo-gate.js');
    const check = () => decideRunMode(loadConfig({ ...env, INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG: '1' }), { demo: false });
    if (refused) expect(check).toThrow(refused);
    else expect(check()).toBe('operator');
  });
});

describe('FEEDS_FILE overdue', () => {
  test('reads per-feed stage deadlines, `off` as null, and names a bad one', async () => {
    const { parseFeedsFile } = await import('../../src/config/feeds-file.js');
    const { feedStageDeadlines, DEFAULT_STAGE_DEADLINES } = await import('../../src/config/overdue-deadlines.js');
    const base = { name: 'a', base_url: 'https://op.example/intake_api/2024-12-10', api_key: 'k', api_secret: 's' };
    const [feed] = parseFeedsFile(JSON.stringify([{ ...base, overdue: { sent: '4h', dispensed: 'off' } }]), 'f.json', {});
    expect(feed?.overdue).toEqual({ sent: 4 * 3_600_000, dispensed: null });
    expect(feedStageDeadlines(DEFAULT_STAGE_DEADLINES, feed?.overdue)).toEqual({
      ...DEFAULT_STAGE_DEADLINES,
      sent: 4 * 3_600_000,
      dispensed: null,
    });
    expect(() => parseFeedsFile(JSON.stringify([{ ...base, overdue: { accepted: 'forever' } }]), 'f.json', {})).toThrow(
      /FEEDS_FILE: f\.json \[0\]\.overdue\.accepted: must be a duration/,
    );
    expect(() => parseFeedsFile(JSON.stringify([{ ...base, overdue: { shipped: '1h' } }]), 'f.json', {})).toThrow(/\[0\]\.overdue/);
  });
});
