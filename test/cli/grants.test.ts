import { describe, expect, it } from 'vitest';
import { grantStatements } from '../../src/db/grants.js';
import { runCli } from './helpers/run-cli.js';

describe('intake-sync grants', () => {
  it('--role app --feed F (repeatable): the grants and the feed record in one transaction, with its audit row', async () => {
    const result = await runCli(['grants', '--role', 'app', '--to', 'clinic_a', '--feed', 'clinic-b', '--feed', 'clinic-a'], {});
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout.trim().split('\n')).toEqual([
      '\\set ON_ERROR_STOP on',
      'BEGIN;',
      ...grantStatements('app', 'intake_sync', 'clinic_a'),
      `DELETE FROM "intake_sync"."feed_access" WHERE "role" = '"clinic_a"'::regrole;`,
      `INSERT INTO "intake_sync"."feed_access" ("role", "feed") VALUES ('"clinic_a"'::regrole, 'clinic-a'), ('"clinic_a"'::regrole, 'clinic-b');`,
      `SELECT "intake_sync"."_audit"('role.grant', NULL, 'clinic_a', '{"kind":"app","feeds":["clinic-a","clinic-b"]}'::jsonb);`,
      'COMMIT;',
    ]);
  });

  it('--role app without --feed leaves the feed record as it is, and says so', async () => {
    const result = await runCli(['grants', '--role', 'app', '--to', 'vendor_app'], {});
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain('feed_access');
    expect(result.stderr).toContain('no --feed given');
  });

  it('--role runtime removes any feed record: the runtime role is unrestricted', async () => {
    const result = await runCli(['grants', '--role', 'runtime', '--to', 'sync'], { DATABASE_SCHEMA: 'other_schema' });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`DELETE FROM "other_schema"."feed_access" WHERE "role" = '"sync"'::regrole;`);
    expect(result.stdout).toContain('GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE "other_schema"."subscription_migrations"');
    expect(result.stdout).toContain('GRANT EXECUTE ON FUNCTION "other_schema"._audit(text, text, text, jsonb, text)');
  });

  it.each([
    [['--role', 'app', '--to', 'a', '--feed', 'Clinic A'], '--feed "Clinic A"'],
    [['--role', 'app', '--to', 'a', '--feed', 'x', '--all-feeds'], 'either --feed'],
    [['--role', 'runtime', '--to', 'a', '--feed', 'x'], '--feed and --all-feeds apply to --role app'],
    [['--role', 'owner', '--to', 'a'], '--role must be runtime or app'],
    [['--role', 'app', '--to', "a'; drop"], '--to must be a plain role name'],
  ])('%j exits 2 naming the option, printing nothing', async (args, message) => {
    const result = await runCli(['grants', ...args], {});
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe('');
  });
});
