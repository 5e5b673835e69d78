import { describe, expect, it } from 'vitest';
import { noOperatorLagDetail } from '../../../../src/cli/commands/status/no-operator.js';
import { loadConfig } from '../../../../src/config/config.js';

describe("status's lag without an operator describes the configuration it sees", () => {
  it.each([
    ['nothing configured: the demo', {}, 'unknown: nothing is configured, so this is the demo, whose simulator runs only inside `run`'],
    [
      'DATABASE_URL without a base URL',
      { DATABASE_URL: 'postgres://h/x' },
      'unknown: INTAKE_API_BASE_URL, INTAKE_API_KEY, INTAKE_API_SECRET are not set (DATABASE_URL is set, so `run` needs them too)',
    ],
    [
      'credentials without a base URL',
      { INTAKE_API_KEY: 'k', INTAKE_API_SECRET: 's' },
      'unknown: INTAKE_API_BASE_URL is not set (INTAKE_API_KEY, INTAKE_API_SECRET are set, so `run` needs it too)',
    ],
  ])('%s', (_label, env, detail) => {
    const text = noOperatorLagDetail(loadConfig(env), 'default');
    expect(text).toBe(detail);
    expect(text).not.toContain('sandbox');
  });
});
