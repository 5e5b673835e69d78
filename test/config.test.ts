import { describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

const remote = { INTAKE_API_BASE_URL: 'https://operator.example/intake_api/2024-12-10', INTAKE_API_KEY: 'k', INTAKE_API_SECRET: 's' };

describe('loadConfig', () => {
  test('an empty environment means the embedded defaults', () => {
    const config = loadConfig({});
    expect(config.INTAKE_API_BASE_URL).toBeUndefined();
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config).toMatchObject({ HEALTH_PORT: 8080, POLL_INTERVAL_MS: 5000, PAGE_LIMIT: 250, LOG_LEVEL: 'info', DATA_DIR: './data' });
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
  ])('%o fails naming %s', (env, named) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(named);
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
});
