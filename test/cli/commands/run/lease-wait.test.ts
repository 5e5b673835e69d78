import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LEASE_WAIT_S, leaseWaitMsFrom } from '../../../../src/cli/commands/run/lease-wait.js';
import { startSandbox, type Sandbox } from '../../../../src/sandbox/server.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../../support/db.js';
import { runCli } from '../../../support/cli/run-cli.js';

describe('--wait-for-lease', () => {
  it.each([
    [undefined, true, DEFAULT_LEASE_WAIT_S * 1000],
    ['0', true, 0],
    ['90', true, 90_000],
    ['86400', true, 86_400_000],
  ])('%s (once %s) -> %i ms', (value, once, ms) => {
    expect(leaseWaitMsFrom(value, once)).toBe(ms);
  });

  it.each([
    ['1.5', true, 'must be whole seconds from 0 to 86400 (got "1.5")'],
    ['-1', true, 'must be whole seconds'],
    ['86401', true, 'must be whole seconds'],
    ['10s', true, 'must be whole seconds'],
    ['10', false, 'applies only with --once'],
  ])('refuses %s (once %s)', (value, once, message) => {
    expect(() => leaseWaitMsFrom(value, once)).toThrow(message);
  });
});

const real = await postgresReachable();

describe.skipIf(!real)(`run --once behind another holder of the lease${real ? '' : ` (${NEEDS_POSTGRES})`}`, () => {
  let tdb: TestDatabase;
  let sandbox: Sandbox;
  let holder: postgres.Sql;
  beforeAll(async () => {
    tdb = await createTestDatabase('run_once_lease');
    sandbox = await startSandbox({ timeScale: 1 });
    // a running daemon, as far as the lease is concerned: its own session holds the feed's lease row
    holder = postgres(tdb.url as string, {
      max: 1,
      onnotice: () => {},
      connection: { application_name: 'intake-sync[4242] lease default' },
    });
    await holder`insert into intake_sync.feed_leases (feed, holder, holder_pid, acquired_at, heartbeat_at, expires_at)
                  values ('default', 'a-running-daemon', pg_backend_pid(), now(), now(), now() + interval '1 hour')`;
  });
  afterAll(async () => {
    await holder?.end();
    await sandbox?.close();
    await tdb?.drop();
  });

  it('exits 1 after the wait, naming the feed and who holds the lease; a bad value exits 2 before connecting', async () => {
    const env = {
      DATABASE_URL: tdb.url as string,
      INTAKE_API_BASE_URL: sandbox.baseUrl,
      INTAKE_API_KEY: sandbox.credentials[0]?.key ?? '',
      INTAKE_API_SECRET: sandbox.credentials[0]?.secret ?? '',
      LEASE_RETRY_MS: '200',
      LEASE_TTL_MS: '5000',
    };
    const started = Date.now();
    const result = await runCli(['run', '--once', '--wait-for-lease', '1'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('feed default: another process holds the feed lease (backend pid');
    expect(result.stderr).toContain('application_name "intake-sync[4242] lease default"');
    expect(result.stderr).toContain('gave up after --wait-for-lease 1s');
    expect(Date.now() - started).toBeLessThan(25_000);
    const bad = await runCli(['run', '--once', '--wait-for-lease', 'soon'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--wait-for-lease: must be whole seconds');
  }, 60_000);
});
