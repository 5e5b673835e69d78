import { describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';

const remote = { INTAKE_API_BASE_URL: 'https://operator.example/intake_api/2024-12-10', INTAKE_API_KEY: 'k', INTAKE_API_SECRET: 's' };

describe('loadConfig', () => {
  test('an empty environment means the embedded defaults', () => {
    const config = loadConfig({});
    expect(config.INTAKE_API_BASE_URL).toBeUndefined();
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config).toMatchObject({ HEALTH_PORT: 8080, POLL_INTERVAL_MS: 5000, PAGE_LIMIT: 250, LOG_LEVEL: 'info', DATA_DIR: './data' });
  });

  test('the schema defaults to intake_sync and migrations run on start; a 63-byte name is accepted', () => {
    expect(loadConfig({})).toMatchObject({ DATABASE_SCHEMA: 'intake_sync', MIGRATE_ON_START: true });
    expect(loadConfig({ DATABASE_SCHEMA: 'vendor_sync_2', MIGRATE_ON_START: 'false' })).toMatchObject({
      DATABASE_SCHEMA: 'vendor_sync_2',
      MIGRATE_ON_START: false,
    });
    expect(loadConfig({ DATABASE_SCHEMA: 's'.repeat(63) }).DATABASE_SCHEMA).toHaveLength(63);
  });

  test('numbers are coerced and empty strings count as unset', () => {
    expect(loadConfig({ POLL_INTERVAL_MS: '250', HEALTH_PORT: '' })).toMatchObject({ POLL_INTERVAL_MS: 250, HEALTH_PORT: 8080 });
  });

  test.each([
    [{ POLL_INTERVAL_MS: 'abc' }, 'POLL_INTERVAL_MS'],
    [{ HEALTH_PORT: '99999' }, 'HEALTH_PORT'],
    [{ PAGE_LIMIT: '251' }, 'PAGE_LIMIT'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ FEED_NAME: 'Has Spaces' }, 'FEED_NAME'],
    [{ INTAKE_API_BASE_URL: 'not a url' }, 'INTAKE_API_BASE_URL'],
    [{ ...remote, INTAKE_API_BASE_URL: 'http://operator.example/intake_api/2024-12-10' }, 'INTAKE_API_BASE_URL: must use https://'],
    [{ ...remote, INTAKE_API_SECRET: undefined }, 'INTAKE_API_SECRET: is required when INTAKE_API_BASE_URL is set'],
    [{ LEASE_RETRY_MS: '5000', LEASE_TTL_MS: '6000' }, 'LEASE_TTL_MS'],
    [{ DATABASE_SCHEMA: 'public' }, 'DATABASE_SCHEMA: must not be public'],
    [{ DATABASE_SCHEMA: 'pg_intake' }, 'DATABASE_SCHEMA: must not start with pg_'],
    [{ DATABASE_SCHEMA: 'information_schema' }, 'DATABASE_SCHEMA: must not be information_schema'],
    [{ DATABASE_SCHEMA: 'IntakeSync' }, 'DATABASE_SCHEMA: must be a lowercase identifier'],
    [{ DATABASE_SCHEMA: 'intake-sync' }, 'DATABASE_SCHEMA: must be a lowercase identifier'],
    [{ DATABASE_SCHEMA: '1sync' }, 'DATABASE_SCHEMA: must be a lowercase identifier'],
    [{ DATABASE_SCHEMA: 'a"b' }, 'DATABASE_SCHEMA: must be a lowercase identifier'],
    [{ DATABASE_SCHEMA: 's'.repeat(64) }, 'DATABASE_SCHEMA: must be at most 63 bytes'],
    [{ MIGRATE_ON_START: 'yes' }, 'MIGRATE_ON_START: must be true or false'],
    // issue 17 §2: the base URL names the API version path, carries no credentials
    [{ ...remote, INTAKE_API_BASE_URL: 'https://operator.example' }, 'INTAKE_API_BASE_URL: must end in /intake_api/<version>'],
    [
      { ...remote, INTAKE_API_BASE_URL: 'https://operator.example/api/2024-12-10' },
      'INTAKE_API_BASE_URL: must end in /intake_api/<version>',
    ],
    [
      { ...remote, INTAKE_API_BASE_URL: 'https://operator.example/intake_api/2019-01-01' },
      'INTAKE_API_BASE_URL: names API version 2019-01-01',
    ],
    [
      { ...remote, INTAKE_API_BASE_URL: 'https://u:p@operator.example/intake_api/2024-12-10' },
      'INTAKE_API_BASE_URL: must not carry a user',
    ],
    [
      { ...remote, INTAKE_API_BASE_URL: 'https://operator.example/intake_api/2024-12-10?x=1' },
      'INTAKE_API_BASE_URL: must not carry a query',
    ],
    // no variable can switch the simulator guard off; TLS checks cannot be switched off either
    [{ INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG: '0' }, 'INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG: must be 1 or unset'],
    [{ NODE_TLS_REJECT_UNAUTHORIZED: '0' }, 'NODE_TLS_REJECT_UNAUTHORIZED: must not be 0'],
    // the operator console (docs/console.md)
    [{ CONSOLE_PORT: '70000' }, 'CONSOLE_PORT'],
    [{ CONSOLE_IDLE_TIMEOUT: 'forever' }, 'CONSOLE_IDLE_TIMEOUT: must be a duration from 1m to 12h'],
    [{ CONSOLE_IDLE_TIMEOUT: '30s' }, 'CONSOLE_IDLE_TIMEOUT: must be a duration from 1m to 12h'],
    [{ CONSOLE_IDLE_TIMEOUT: '15 minutes' }, 'CONSOLE_IDLE_TIMEOUT: must be a duration'],
  ])('%o fails naming %s', (env, named) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(named);
  });

  test('a trailing slash and the second supported version are accepted; the password of a refused URL is never printed', () => {
    expect(loadConfig({ ...remote, INTAKE_API_BASE_URL: 'https://op.example/intake_api/2025-06-01/' }).INTAKE_API_BASE_URL).toBe(
      'https://op.example/intake_api/2025-06-01',
    );
    expect(() => loadConfig({ ...remote, INTAKE_API_BASE_URL: 'https://u:hunter2@op.example/intake_api/2024-12-10' })).toThrow(
      /^(?![\s\S]*hunter2)/,
    );
  });

  test('http:// is accepted for a loopback operator (the sandbox)', () => {
    const env = { ...remote, INTAKE_API_BASE_URL: 'http://127.0.0.1:4010/intake_api/2024-12-10' };
    expect(loadConfig(env).INTAKE_API_BASE_URL).toBe(env.INTAKE_API_BASE_URL);
  });

  test('every bad variable is reported at once, never its value', () => {
    const secret = 'hunter2-secret';
    const error = (() => {
      try {
        loadConfig({ POLL_INTERVAL_MS: 'x', HEALTH_PORT: '-1', INTAKE_API_BASE_URL: 'ftp://h/x', INTAKE_API_SECRET: secret });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error?.message).toMatch(/POLL_INTERVAL_MS[\s\S]*HEALTH_PORT|HEALTH_PORT[\s\S]*POLL_INTERVAL_MS/);
    expect(error?.message).not.toContain(secret);
  });

  test('the console defaults: loopback, 8081, 15 minutes of idle', () => {
    const config = loadConfig({});
    expect([config.CONSOLE_HOST, config.CONSOLE_PORT, config.CONSOLE_IDLE_TIMEOUT]).toEqual(['127.0.0.1', 8081, 15 * 60_000]);
    expect(loadConfig({ CONSOLE_IDLE_TIMEOUT: '2h' }).CONSOLE_IDLE_TIMEOUT).toBe(2 * 3_600_000);
  });
});

describe('OVERDUE_* settings', () => {
  test('default to the documented deadlines, accept off, and refuse forever naming the variable', async () => {
    const { loadConfig } = await import('../../src/config/config.js');
    const { configStageDeadlines, DEFAULT_STAGE_DEADLINES } = await import('../../src/config/overdue-deadlines.js');
    expect(configStageDeadlines(loadConfig({}))).toEqual(DEFAULT_STAGE_DEADLINES);
    expect(configStageDeadlines(loadConfig({ OVERDUE_SENT: 'off', OVERDUE_DISPENSED: '5d' }))).toEqual({
      ...DEFAULT_STAGE_DEADLINES,
      sent: null,
      dispensed: 5 * 86_400_000,
    });
    expect(() => loadConfig({ OVERDUE_ACCEPTED: 'forever' })).toThrow(/OVERDUE_ACCEPTED: must be a duration/);
    expect(() => loadConfig({ OVERDUE_ORDERED: '2 days' })).toThrow(/OVERDUE_ORDERED/);
  });
});
