import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/sandbox/clock.js';
import { sampleIdentity } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { registerLocalPrescriptions } from '../../src/sync/matching/local-prescriptions.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import { spawnCli } from '../support/process/worker-process.js';
import { cliBudget } from '../support/cli/run-cli.js';

const hasPostgres = await postgresReachable();

/** `--feed NAME` on the commands that touch one feed's rows, checkpoint, outbox or account. */
describe.skipIf(!hasPostgres)(`--feed on the CLI (${NEEDS_POSTGRES})`, () => {
  let test: TestDatabase;
  let sandbox: Sandbox;
  let dir: string;
  let env: Record<string, string>;

  // several CLI processes per test: each its own budget (cliBudget, run-cli.ts)
  async function cli(args: string[], extra: Record<string, string> = {}) {
    const child = spawnCli(args, { ...env, ...extra });
    const code = await child.exited;
    return {
      code,
      stdout: child.stdout(),
      stderr: child
        .logs()
        .map((l) => String(l.raw ?? JSON.stringify(l)))
        .join('\n'),
    };
  }

  beforeAll(async () => {
    test = await createTestDatabase('cli_feed_option');
    dir = mkdtempSync(join(tmpdir(), 'feed-option-'));
    sandbox = await startSandbox({
      clock: new ManualClock(),
      credentials: [
        { key: 'west-key', secret: 'west-secret-0123456789' },
        { key: 'east-key', secret: 'east-secret-0123456789' },
      ],
    });
    await registerLocalPrescriptions(test.database.db, [{ external_id: 'w-1', prescription_identity: sampleIdentity(1) }], {
      feed: 'west',
    });
    await registerLocalPrescriptions(test.database.db, [{ external_id: 'e-1', prescription_identity: sampleIdentity(1) }], {
      feed: 'east',
    });
    const file = join(dir, 'feeds.json');
    writeFileSync(
      file,
      JSON.stringify([
        { name: 'west', base_url: sandbox.baseUrl, api_key: 'west-key', api_secret: 'west-secret-0123456789' },
        { name: 'east', base_url: sandbox.baseUrl, api_key: 'east-key', api_secret: 'env:EAST_SECRET' },
      ]),
    );
    env = { DATABASE_URL: test.url ?? '', FEEDS_FILE: file, EAST_SECRET: 'east-secret-0123456789' };
  });
  afterAll(async () => {
    await sandbox?.close();
    await test?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('acts on the named feed only', { timeout: cliBudget(4) }, async () => {
    const listed = await cli(['prescriptions', 'list', '--feed', 'east', '--json']);
    expect(listed.code).toBe(0);
    expect(
      listed.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { external_id: string; feed: string }).external_id),
    ).toEqual(['e-1']);

    const reset = await cli(['checkpoint', 'reset', '--feed', 'east', '--beginning', '--json']);
    expect(reset.code).toBe(0);
    expect(JSON.parse(reset.stdout)).toMatchObject({ feed: 'east' });
    const shown = await cli(['checkpoint', 'show', '--feed', 'west', '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ feed: 'west', resets: [] });
    const status = await cli(['status', '--feed', 'east', '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ feed: 'east' });
  });

  it('status --all-feeds reports every configured feed; the one-feed shape is unchanged', { timeout: cliBudget(3) }, async () => {
    const all = await cli(['status', '--all-feeds', '--json']);
    expect(all.code).toBe(0);
    const { feeds } = JSON.parse(all.stdout) as { feeds: Array<{ feed: string; prescriptions: { total: number } }> };
    expect(feeds.map((f) => [f.feed, f.prescriptions.total])).toEqual([
      ['west', 1],
      ['east', 1],
    ]);
    const text = await cli(['status', '--all-feeds']);
    expect(text.stdout.match(/^feed +(\w+)$/gm)).toEqual(['feed            west', 'feed            east']);
    const both = await cli(['status', '--all-feeds', '--feed', 'east']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--all-feeds and --feed: give one of them/);
  });

  it("reaches the feed's own account (events list)", { timeout: cliBudget(3) }, async () => {
    // one page of each account: an empty feed answers either way, so prove the credential by a 401 on a bad one
    expect((await cli(['events', 'list', '--feed', 'east', '--json'])).code).toBe(0);
    const refused = await cli(['events', 'list', '--feed', 'east', '--json'], { EAST_SECRET: 'wrong' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).not.toContain('wrong');
  });

  it.each<[string, string[], RegExp]>([
    [
      'no --feed with several feeds, none named default',
      ['checkpoint', 'show'],
      /--feed: required when several feeds are configured and none is named default \(known feeds: west, east\)/,
    ],
    [
      'an unknown feed',
      ['prescriptions', 'list', '--feed', 'north'],
      /--feed: "north" is not a configured feed \(known feeds: west, east\)/,
    ],
    ['an unknown feed on resync', ['resync', '--feed', 'north'], /--feed: "north" is not a configured feed/],
    ['an unknown feed on quarantine list', ['quarantine', 'list', '--feed', 'north'], /--feed: "north" is not a configured feed/],
  ])('%s: refused (exit 2), naming --feed and the known feeds', async (_label, args, message) => {
    const refused = await cli(args);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(message);
  });

  it('single-feed variables: --feed defaults to FEED_NAME; another name is refused', async () => {
    const single = {
      FEEDS_FILE: '',
      INTAKE_API_BASE_URL: sandbox.baseUrl,
      INTAKE_API_KEY: 'west-key',
      INTAKE_API_SECRET: 'west-secret-0123456789',
      FEED_NAME: 'west',
    };
    const shown = await cli(['checkpoint', 'show', '--json'], single);
    expect(JSON.parse(shown.stdout)).toMatchObject({ feed: 'west' });
    const refused = await cli(['checkpoint', 'show', '--feed', 'east'], single);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--feed: "east" is not a configured feed \(known feeds: west\)/);
  });
});
