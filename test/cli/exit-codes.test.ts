import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli/run-cli.js';

// The one rule (docs/cli.md): 0 ok, 1 runtime failure, 2 usage or input error (nothing written).
// Each bad input here is refused before anything is read or written, so no database is needed.
const UNREACHABLE = { DATABASE_URL: 'postgres://postgres:pw@127.0.0.1:5499/x' };

describe('the exit-code rule', () => {
  it.each([
    ['an unknown command', ['bogus-command'], /unknown command 'bogus-command'/],
    ['an unknown option', ['status', '--bogus'], /unknown option '--bogus'/],
    ['a missing argument', ['prescriptions', 'get'], /missing required argument/],
    [
      'prescriptions list --status bogus',
      ['prescriptions', 'list', '--status', 'bogus'],
      /--status must be one of accepted, ordered, dispensed, delivered, rejected \(got "bogus"\)/,
    ],
    ['quarantine list --reason bogus', ['quarantine', 'list', '--reason', 'bogus'], /--reason must be one of/],
    ['events list --limit 0', ['events', 'list', '--limit', '0'], /--limit must be an integer from 1 to 250/],
    ['run --json without --once', ['run', '--json'], /--json only applies together with --once/],
    ['checkpoint reset without a target', ['checkpoint', 'reset'], /give --beginning or --to ITERATOR/],
    ['grants --role bogus', ['grants', '--role', 'bogus', '--to', 'x'], /--role must be runtime or app/],
    [
      'doctor --feed north',
      ['doctor', '--feed', 'north'],
      /--feed: "north" is not a configured feed/,
      { INTAKE_API_BASE_URL: 'http://127.0.0.1:9/intake_api/2024-12-10', INTAKE_API_KEY: 'k', INTAKE_API_SECRET: 's' },
    ],
    ['resync --feed north', ['resync', '--feed', 'north'], /--feed: "north" is not a configured feed/],
    [
      'a bad variable, naming what was expected and what was given',
      ['status'],
      /POLL_INTERVAL_MS: must be a whole number from 10 to 3600000 \(given "abc"\)/,
      { POLL_INTERVAL_MS: 'abc' },
    ],
  ])(
    '%s: exit 2',
    async (_label, args, message, env?: Record<string, string>) => {
      const result = await runCli(args, { ...UNREACHABLE, ...(env ?? {}) });
      expect(result.stderr).toMatch(message);
      expect(result.code).toBe(2);
    },
    30_000,
  );

  it('a secret variable is never echoed in a config error', async () => {
    const result = await runCli(['status'], { DATABASE_URL: 'mysql://user:hunter2@db/x' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL \(the value given is not shown: it may hold a secret\)/,
    );
    expect(result.stderr).not.toContain('hunter2');
  }, 30_000);

  it('a database that cannot be reached is a runtime failure (exit 1) naming DATABASE_URL and the host, never the password', async () => {
    const result = await runCli(['status'], UNREACHABLE);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'intake-sync: cannot reach the database at 127.0.0.1:5499 (DATABASE_URL): connection refused (is Postgres running and listening there?)\n',
    );
  }, 30_000);

  it('LEASE_DATABASE_URL unreachable names LEASE_DATABASE_URL', async () => {
    const result = await runCli(['status'], {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
      LEASE_DATABASE_URL: 'postgres://postgres:pw@127.0.0.1:5498/postgres',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/cannot reach the database at 127\.0\.0\.1:5498 \(LEASE_DATABASE_URL\): connection refused/);
  }, 30_000);

  it('--version prints the version, exit 0', async () => {
    const result = await runCli(['--version'], {});
    expect(result).toMatchObject({ code: 0, stdout: '0.2.0\n' });
  }, 30_000);
});
