import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { createPostgresClient } from '../../src/db/postgres-client.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli } from '../support/cli/run-cli.js';
import { startTlsPostgres, type TlsPostgres, tlsPostgresUnavailable } from '../support/tls-postgres.js';

/**
 * TLS to a real PostgreSQL (issue 20 §2): a cluster of its own with ssl=on, a CA and a server
 * certificate made here, and a pg_hba.conf that accepts TLS only.
 */
const unavailable = tlsPostgresUnavailable();
if (unavailable) console.warn(`tls-connection: skipped: ${unavailable}`);

describe.skipIf(unavailable !== undefined)('TLS to a real PostgreSQL (ssl=on, hostssl only)', () => {
  let server: TlsPostgres;
  let sandbox: Sandbox;

  beforeAll(async () => {
    server = await startTlsPostgres();
    // the admin connection itself goes through the code under test: plaintext is refused here
    const admin = createPostgresClient(
      server.url('postgres', { sslmode: 'verify-full', sslrootcert: server.caFile }),
      { max: 1, onnotice: () => {} },
      { variable: 'admin' },
    );
    try {
      await admin.unsafe('create database app');
      await admin.unsafe('create role tlsclient login superuser');
    } finally {
      await admin.end();
    }
    sandbox = await startSandbox({ timeScale: 1 });
    sandbox.store.seedBulk({ count: 12, rejectEvery: 1_000, prefix: 'tls' });
  }, 60_000);

  afterAll(async () => {
    await sandbox?.close();
    server?.stop();
  });

  /** Whether the server sees this session encrypted (pg_stat_ssl). */
  async function sessionIsEncrypted(url: string, caFile?: string): Promise<boolean> {
    const client = createPostgresClient(url, { max: 1, onnotice: () => {} }, { variable: 'DATABASE_URL', caFile });
    try {
      const [row] = await client<{ ssl: boolean }[]>`select ssl from pg_stat_ssl where pid = pg_backend_pid()`;
      return row?.ssl === true;
    } finally {
      await client.end();
    }
  }

  it('verify-full with sslrootcert: migrate, then run --once drains the feed over TLS', async () => {
    const env = {
      DATABASE_URL: server.url('app', { sslmode: 'verify-full', sslrootcert: server.caFile }),
      INTAKE_API_BASE_URL: sandbox.baseUrl,
      INTAKE_API_KEY: sandbox.credentials[0]?.key ?? '',
      INTAKE_API_SECRET: sandbox.credentials[0]?.secret ?? '',
      HEALTH_PORT: '0',
    };
    const migrated = await runCli(['migrate'], env);
    expect(migrated.stderr).toBe('');
    expect(migrated.code).toBe(0);
    const drained = await runCli(['run', '--once', '--json'], env);
    expect(drained.stderr).not.toMatch(/error/i);
    expect(drained.code).toBe(0);
    const summary = JSON.parse(drained.stdout.trim().split('\n').at(-1) ?? '{}') as { drained?: boolean; applied?: number };
    expect(summary.drained).toBe(true);
    const rows = createPostgresClient(env.DATABASE_URL, { max: 1, onnotice: () => {} }, { variable: 'DATABASE_URL' });
    try {
      const [count] = await rows<{ n: number }[]>`select count(*)::int as n from intake_sync.events`;
      // each seeded prescription publishes several events (created, accepted...)
      expect(count?.n).toBeGreaterThanOrEqual(12);
    } finally {
      await rows.end();
    }
    expect(await sessionIsEncrypted(env.DATABASE_URL)).toBe(true);
  }, 90_000);

  it('DATABASE_CA_FILE verifies a URL that names no CA file', async () => {
    const url = server.url('app', { sslmode: 'verify-full' });
    expect(await sessionIsEncrypted(url, server.caFile)).toBe(true);
    const status = await runCli(['migrate'], { DATABASE_URL: url, DATABASE_CA_FILE: server.caFile });
    expect(status.code).toBe(0);
  }, 60_000);

  it('a server certificate from another CA is refused, naming the setting', async () => {
    const url = server.url('app', { sslmode: 'verify-full', sslrootcert: server.otherCaFile });
    const database = await openDatabase({ url, tls: { variable: 'DATABASE_URL' } });
    try {
      await expect(database.sql?.unsafe('select 1')).rejects.toThrow(
        `DATABASE_URL: the server's certificate at 127.0.0.1:${server.port} is not signed by the CA in sslrootcert=${server.otherCaFile}`,
      );
    } finally {
      await database.close();
    }
    const viaEnv = await runCli(['migrate'], { DATABASE_URL: server.url('app'), DATABASE_CA_FILE: server.otherCaFile });
    // 127.0.0.1 without sslmode is loopback (plaintext), which this server refuses: ask for verification
    const named = await runCli(['migrate'], {
      DATABASE_URL: server.url('app', { sslmode: 'verify-ca' }),
      DATABASE_CA_FILE: server.otherCaFile,
    });
    expect(viaEnv.code).toBe(1);
    expect(named.code).toBe(1);
    expect(named.stderr).toContain(`is not signed by the CA in DATABASE_CA_FILE=${server.otherCaFile}`);
  }, 60_000);

  it('a host name the certificate does not list is refused by verify-full, and accepted by verify-ca', async () => {
    const wrongName = server.url('app', { sslmode: 'verify-full', sslrootcert: server.caFile }, 'localhost');
    const client = createPostgresClient(wrongName, { max: 1, onnotice: () => {} }, { variable: 'DATABASE_URL' });
    try {
      await expect(client`select 1`).rejects.toThrow(
        "DATABASE_URL: the server's certificate does not name localhost (sslmode=verify-full checks the host name)",
      );
    } finally {
      await client.end();
    }
    const caOnly = server.url('app', { sslmode: 'verify-ca', sslrootcert: server.caFile }, 'localhost');
    expect(await sessionIsEncrypted(caOnly)).toBe(true);
  });

  it('without a CA the system store does not trust a private CA: refused, saying which CAs were used', async () => {
    const client = createPostgresClient(
      server.url('app', { sslmode: 'verify-full' }),
      { max: 1, onnotice: () => {} },
      { variable: 'LEASE_DATABASE_URL' },
    );
    try {
      await expect(client`select 1`).rejects.toThrow(
        /LEASE_DATABASE_URL: .* is not signed by the system's CAs \(no sslrootcert or DATABASE_CA_FILE given\)/,
      );
    } finally {
      await client.end();
    }
  });

  it('plaintext is refused by the server, and the error says the connection was not encrypted', async () => {
    const result = await runCli(['migrate'], { DATABASE_URL: server.url('app', { sslmode: 'disable' }) });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/no pg_hba\.conf entry .*no encryption/);
    // and plain postgres.js (what the daemon used to be) proves the server really refuses it
    const plain = postgres(server.url('app'), { max: 1, onnotice: () => {} });
    await expect(plain`select 1`).rejects.toThrow(/no encryption/);
    await plain.end();
  }, 60_000);

  it('require encrypts without verifying (no CA needed)', async () => {
    expect(await sessionIsEncrypted(server.url('app', { sslmode: 'require' }))).toBe(true);
  });

  it('a client certificate (sslcert, sslkey) authenticates the role its CN names', async () => {
    const base = { sslmode: 'verify-full', sslrootcert: server.caFile };
    const withCert = new URL(server.url('app', { ...base, sslcert: server.clientCertFile, sslkey: server.clientKeyFile }));
    withCert.username = 'tlsclient';
    const client = createPostgresClient(withCert.toString(), { max: 1, onnotice: () => {} }, { variable: 'DATABASE_URL' });
    try {
      const [row] = await client<{ who: string }[]>`select current_user as who`;
      expect(row?.who).toBe('tlsclient');
    } finally {
      await client.end();
    }
    const withoutCert = new URL(server.url('app', base));
    withoutCert.username = 'tlsclient';
    const refused = createPostgresClient(withoutCert.toString(), { max: 1, onnotice: () => {} }, { variable: 'DATABASE_URL' });
    try {
      await expect(refused`select 1`).rejects.toThrow(/certificate/i);
    } finally {
      await refused.end();
    }
  });
});
