import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditFilterOf } from '../../../../src/cli/commands/audit/audit.js';
import { parseSince } from '../../../../src/cli/commands/audit/since.js';
import { recordAudit } from '../../../../src/store-api/audit/audit-entries.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../../support/db.js';
import { cliBudget, runCli } from '../../../support/cli/run-cli.js';

const NOW = new Date('2024-12-10T12:00:00.000Z');

/** The control characters (C0 but the newline, DEL, C1) in `text`, as code points. */
const controlsIn = (text: string) =>
  [...text].map((c) => c.charCodeAt(0)).filter((n) => (n < 0x20 && n !== 0x0a) || (n >= 0x7f && n <= 0x9f));

describe('--since', () => {
  it.each([
    ['90s', '2024-12-10T11:58:30.000Z'],
    ['15m', '2024-12-10T11:45:00.000Z'],
    ['12h', '2024-12-10T00:00:00.000Z'],
    ['30d', '2024-11-10T12:00:00.000Z'],
    ['2w', '2024-11-26T12:00:00.000Z'],
    ['2024-12-01', '2024-12-01T00:00:00.000Z'],
    ['2024-12-01T08:30:00Z', '2024-12-01T08:30:00.000Z'],
    ['2024-12-01T08:30', '2024-12-01T08:30:00.000Z'],
    ['2024-12-01 08:30:15.5+01:00', '2024-12-01T07:30:15.500Z'],
  ])('%s is %s', (value, expected) => {
    expect(parseSince(value, NOW).toISOString()).toBe(expected);
  });

  it.each(['', '30', 'd', '-1d', '1y', '1.5h', '2024-02-31', '2024-13-01', '2024-12-01T25:00Z', 'yesterday', '1d; drop table x'])(
    '%j is refused naming --since',
    (value) => {
      expect(() => parseSince(value, NOW)).toThrow(/^--since /);
    },
  );
});

describe('audit list options', () => {
  it('takes an action, a noun, a feed and a limit', () => {
    expect(auditFilterOf({ action: 'outbox.send', feed: 'clinic-a', limit: '5' }, NOW)).toEqual({
      action: 'outbox.send',
      feed: 'clinic-a',
      limit: 5,
    });
    expect(auditFilterOf({ action: 'outbox.*' }, NOW)).toEqual({ action: 'outbox.*', limit: 100 });
  });

  it.each([
    [{ action: 'Outbox.Send' }, /^--action /],
    [{ action: '*' }, /^--action /],
    [{ feed: 'Clinic A' }, /^--feed /],
    [{ limit: '0' }, /^--limit /],
    [{ limit: '10001' }, /^--limit /],
    [{ limit: 'ten' }, /^--limit /],
    [{ since: 'soon' }, /^--since /],
  ])('%j is a usage error naming the option', (options, message) => {
    expect(() => auditFilterOf(options, NOW)).toThrow(message);
  });
});

describe.skipIf(!(await postgresReachable()))(`intake-sync audit list (${NEEDS_POSTGRES})`, () => {
  let tdb: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    tdb = await createTestDatabase('cli_audit');
    env = { DATABASE_URL: tdb.url ?? '' };
    const db = tdb.database.db;
    const names = tdb.database.names;
    await db.transaction(async (tx) => {
      await recordAudit(tx, names, { action: 'outbox.send', feed: 'clinic-a', subject: 'rx-1', detail: { outbox_id: 1 } }, 'ops@h1');
      await recordAudit(tx, names, { action: 'outbox.cancel', feed: 'clinic-b', subject: 'rx-2', detail: { outbox_id: 2 } }, 'ops@h1');
      await recordAudit(tx, names, { action: 'feed.resync', feed: 'clinic-a', detail: { phase: 'started' } }, 'ops@h2');
    });
    await db.execute(
      sql`insert into intake_sync.audit_entries (at, actor, action, feed, subject) values (now() - interval '3 days', 'postgres', 'outbox.send', 'clinic-a', 'rx-old')`,
    );
  });
  afterAll(async () => {
    await tdb?.drop();
  });

  // several CLI processes: each its own budget (run-cli.ts)
  it('prints the newest entries first, filtered by action, noun, feed and since, as JSON lines', { timeout: cliBudget(4) }, async () => {
    const all = await runCli(['audit', 'list', '--json'], env);
    expect(all.stderr).toBe('');
    expect(all.code).toBe(0);
    const rows = all.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((r) => r.subject)).toEqual([null, 'rx-2', 'rx-1', 'rx-old']);
    expect(rows[1]).toMatchObject({ actor: 'postgres (ops@h1)', action: 'outbox.cancel', feed: 'clinic-b', detail: { outbox_id: 2 } });

    const noun = await runCli(['audit', 'list', '--json', '--action', 'outbox.*', '--feed', 'clinic-a', '--since', '1d'], env);
    expect(
      noun.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).subject),
    ).toEqual(['rx-1']);
    const limited = await runCli(['audit', 'list', '--json', '--limit', '1', '--action', 'outbox.send'], env);
    expect(
      limited.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).subject),
    ).toEqual(['rx-1']);
    const readable = await runCli(['audit', 'list', '--action', 'feed.resync'], env);
    expect(readable.stdout).toMatch(/^at\s+actor\s+client_addr\s+action\s+feed\s+subject\s+detail\n/);
    expect(readable.stdout).toContain('{"phase":"started"}');
  });

  it('stored text cannot forge a line or drive the terminal: newlines and ESC sequences print escaped', async () => {
    // an external_id as stored by the owner (the SQL API refuses such an attribution; a subject is the caller's text)
    await tdb.database.db.execute(
      sql`insert into intake_sync.audit_entries (actor, action, feed, subject) values
        ('vendor_app', 'outbox.send', 'clinic-c', ${'rx-9\n2026-01-01T00:00:00.000Z  postgres  purge.run  clinic-b\u001b[31m'})`,
    );
    const table = await runCli(['audit', 'list', '--feed', 'clinic-c'], env);
    expect(table.code).toBe(0);
    expect(table.stdout.trim().split('\n')).toHaveLength(2);
    expect(controlsIn(table.stdout)).toEqual([]);
    expect(table.stdout).toContain('rx-9\\n2026-01-01T00:00:00.000Z  postgres  purge.run  clinic-b\\e[31m');
    const json = await runCli(['audit', 'list', '--feed', 'clinic-c', '--json'], env);
    expect(controlsIn(json.stdout)).toEqual([]);
    expect(JSON.parse(json.stdout).subject).toBe('rx-9\n2026-01-01T00:00:00.000Z  postgres  purge.run  clinic-b\u001b[31m');
  });

  it('a bad option exits 2 naming it, before connecting', async () => {
    const result = await runCli(['audit', 'list', '--limit', '0'], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--limit "0"');
    expect(result.stdout).toBe('');
  });
});
