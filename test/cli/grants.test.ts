import { describe, expect, it } from 'vitest';
import { grantStatements } from '../../src/db/grants.js';
import { runCli } from '../support/cli/run-cli.js';

describe('intake-sync grants', () => {
  it('--role app --feed F (repeatable): notes as SQL comments, the grants, the feed check and record, the audit row, one transaction', async () => {
    const result = await runCli(['grants', '--role', 'app', '--to', 'clinic_a', '--feed', 'clinic-b', '--feed', 'clinic-a'], {});
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const lines = result.stdout.trim().split('\n');
    expect(lines.slice(0, 4)).toEqual([
      '-- intake-sync grants: app role clinic_a: the SQL API, for feed(s) clinic-a, clinic-b only (replacing what it had)',
      '-- run as the schema owner; records of dropped roles are removed first; one transaction, stops at the first error',
      '\\set ON_ERROR_STOP on',
      'BEGIN;',
    ]);
    const grants = grantStatements('app', 'intake_sync', 'clinic_a');
    expect(lines.slice(4, 4 + grants.length)).toEqual(grants);
    const rest = lines.slice(4 + grants.length).join('\n');
    expect(rest).toContain('PERFORM "intake_sync"."_forget_dropped_roles"(true)');
    expect(rest).toContain(`unnest(ARRAY['clinic-a', 'clinic-b']::text[])`);
    expect(rest).toContain(`DELETE FROM "intake_sync"."feed_access" WHERE "role" = '"clinic_a"'::regrole;`);
    expect(rest).toContain(
      `INSERT INTO "intake_sync"."feed_access" ("role", "role_name", "feed") VALUES ('"clinic_a"'::regrole, 'clinic_a', 'clinic-a'), ('"clinic_a"'::regrole, 'clinic_a', 'clinic-b');`,
    );
    expect(rest).toContain(
      `PERFORM "intake_sync"."_audit"('role.grant', NULL, 'clinic_a', '{"kind":"app","feeds":["clinic-a","clinic-b"]}'::jsonb)`,
    );
    expect(lines.at(-1)).toBe('COMMIT;');
    // no statement returns rows: `psql -q` prints nothing (issue 35 §5)
    expect(rest).not.toMatch(/^SELECT/m);
  });

  it('--new-feed leaves the known-feed check out; --all-feeds removes the record', async () => {
    const fresh = await runCli(['grants', '--role', 'app', '--to', 'a', '--feed', 'north', '--new-feed'], {});
    expect(fresh.code).toBe(0);
    expect(fresh.stdout).not.toContain('never seen');
    expect(fresh.stdout).toContain(`('"a"'::regrole, 'a', 'north')`);
    const all = await runCli(['grants', '--role', 'app', '--to', 'a', '--all-feeds'], {});
    expect(all.code).toBe(0);
    expect(all.stdout).toContain('-- intake-sync grants: app role a: the SQL API, for every feed');
    expect(all.stdout).toContain(`DELETE FROM "intake_sync"."feed_access" WHERE "role" = '"a"'::regrole;`);
    expect(all.stdout).not.toContain('INSERT INTO');
  });

  it('--role runtime removes any feed record: the runtime role is unrestricted', async () => {
    const result = await runCli(['grants', '--role', 'runtime', '--to', 'sync'], { DATABASE_SCHEMA: 'other_schema' });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`DELETE FROM "other_schema"."feed_access" WHERE "role" = '"sync"'::regrole;`);
    expect(result.stdout).toContain('GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE "other_schema"."subscription_migrations"');
    expect(result.stdout).toContain('GRANT EXECUTE ON FUNCTION "other_schema"._audit(text, text, text, jsonb, text)');
  });

  it.each([
    // fail closed (issue 33 §6): an app role is always told which feeds
    [['--role', 'app', '--to', 'vendor_app'], '--role app needs --feed NAME (repeatable: the feeds the role may use) or --all-feeds'],
    [['--role', 'app', '--to', 'a', '--new-feed'], '--new-feed goes with --feed'],
    [['--role', 'app', '--to', 'a', '--feed', 'Clinic A'], '--feed "Clinic A"'],
    [['--role', 'app', '--to', 'a', '--feed', 'x', '--all-feeds'], 'either --feed'],
    [['--role', 'runtime', '--to', 'a', '--feed', 'x'], '--feed, --all-feeds and --new-feed apply to --role app'],
    [['--role', 'owner', '--to', 'a'], '--role must be runtime or app'],
    [['--role', 'app', '--to', "a'; drop", '--all-feeds'], '--to must be a plain role name'],
    [['--role', 'app', '--to', 'a$audit$', '--all-feeds'], '--to must be a plain role name'],
  ])('%j exits 2 naming the option, printing nothing', async (args, message) => {
    const result = await runCli(['grants', ...args], {});
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe('');
  });
});
