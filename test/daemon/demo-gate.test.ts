import { describe, expect, it } from 'vitest';
import { decideRunMode, feedOriginRefusal } from '../../src/daemon/demo-gate.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';

// Issue 17 §2: the built-in simulator starts only when nothing points elsewhere, or on `run --demo`.

const remote = { INTAKE_API_BASE_URL: 'https://op.example/intake_api/2024-12-10', INTAKE_API_KEY: 'k', INTAKE_API_SECRET: 's' };
const decide = (env: Record<string, string>, demo = false) => decideRunMode(loadConfig(env), { demo });

describe('decideRunMode', () => {
  it.each<[string, Record<string, string>, boolean, 'operator' | 'demo' | RegExp]>([
    ['nothing set: the README quick start', {}, false, 'demo'],
    [
      'DATA_DIR, schema, ports: still nothing elsewhere',
      { DATA_DIR: '/tmp/x', HEALTH_PORT: '0', DATABASE_SCHEMA: 'demo_s' },
      false,
      'demo',
    ],
    ['a base URL: the operator', remote, false, 'operator'],
    ['FEEDS_FILE: the operator', { FEEDS_FILE: '/f.json', DATABASE_URL: 'postgres://h/db' }, false, 'operator'],
    // the reproduction: a Secret without INTAKE_API_BASE_URL
    [
      'DATABASE_URL without a base URL',
      { DATABASE_URL: 'postgres://h/db' },
      false,
      /INTAKE_API_BASE_URL: is required: DATABASE_URL is set/,
    ],
    ['credentials without a base URL', { INTAKE_API_KEY: 'k', INTAKE_API_SECRET: 's' }, false, /INTAKE_API_KEY, INTAKE_API_SECRET are set/],
    ['LEASE_DATABASE_URL alone', { LEASE_DATABASE_URL: 'postgres://h/db' }, false, /LEASE_DATABASE_URL is set/],
    ['--demo allows DATABASE_URL', { DATABASE_URL: 'postgres://h/db' }, true, 'demo'],
    ['--demo with a base URL', remote, true, /--demo: the built-in simulator cannot run with INTAKE_API_BASE_URL set/],
    ['--demo with FEEDS_FILE', { FEEDS_FILE: '/f.json' }, true, /--demo: .* FEEDS_FILE set/],
    [
      'strict: no demo even with --demo',
      { INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG: '1' },
      true,
      /INTAKE_API_BASE_URL: is required here[\s\S]*DATABASE_URL: is required/,
    ],
    ['strict: no embedded PGlite', { ...remote, INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG: '1' }, false, /DATABASE_URL: is required here/],
    [
      'strict: a full deployment',
      { ...remote, DATABASE_URL: 'postgres://h/db', INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG: '1' },
      false,
      'operator',
    ],
  ])('%s', (_label, env, demo, expected) => {
    if (expected instanceof RegExp) {
      expect(() => decide(env, demo)).toThrow(ConfigError);
      expect(() => decide(env, demo)).toThrow(expected);
    } else {
      expect(decide(env, demo)).toBe(expected);
    }
  });

  it('no value of INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG allows the simulator where DATABASE_URL points', () => {
    for (const value of ['0', '1', '', 'false']) {
      expect(() => decide({ DATABASE_URL: 'postgres://h/db', INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG: value })).toThrow(/INTAKE_/);
    }
  });
});

describe('feedOriginRefusal', () => {
  it('names the feed and what to do, for each direction', () => {
    expect(feedOriginRefusal({ feed: 'clinic-a', origin: 'operator' }, 'demo').message).toMatch(
      /INTAKE_API_BASE_URL: is not set, and this database holds feed clinic-a, an operator's feed/,
    );
    expect(feedOriginRefusal({ feed: 'default', origin: 'simulator' }, 'operator').message).toMatch(
      /holds feed default of the built-in simulator/,
    );
  });
});
