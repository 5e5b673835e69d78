import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './faults/free-port.js';

/**
 * A PostgreSQL cluster of its own for the TLS tests: ssl=on with a server certificate signed by a
 * CA made here (openssl), and a pg_hba.conf that accepts TLS only (`hostssl`): plaintext is
 * refused by the server. The role `tlsclient` must present a client certificate signed by the CA.
 * initdb refuses root, so as root the cluster belongs to an unprivileged user. Stopped (and its
 * directory removed) by stop().
 */
export interface TlsPostgres {
  port: number;
  /** CA that signed the server and client certificates */
  caFile: string;
  /** a CA that signed nothing here */
  otherCaFile: string;
  clientCertFile: string;
  clientKeyFile: string;
  /** postgres://postgres@127.0.0.1:PORT/DB plus `params` (no TLS parameter unless given) */
  url(database: string, params?: Record<string, string>, host?: string): string;
  stop(): void;
}

/** Why the cluster cannot start here, or undefined: the binaries, openssl, a non-root user. */
export function tlsPostgresUnavailable(): string | undefined {
  if (!findBinDir()) return 'no PostgreSQL server binaries (pg_config --bindir, /usr/lib/postgresql/*/bin or PG_TLS_TEST_BIN)';
  if (spawnSync('openssl', ['version']).status !== 0) return 'no openssl CLI';
  if (process.getuid?.() === 0 && !clusterUser()) return 'running as root without an unprivileged user to own the cluster';
  return undefined;
}

function findBinDir(): string | undefined {
  const candidates = [process.env.PG_TLS_TEST_BIN];
  const configured = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (configured.status === 0) candidates.push(configured.stdout.trim());
  if (existsSync('/usr/lib/postgresql')) {
    for (const version of readdirSync('/usr/lib/postgresql').sort().reverse()) candidates.push(`/usr/lib/postgresql/${version}/bin`);
  }
  return candidates.find((dir) => dir && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')));
}

/** The unprivileged owner when running as root: the matrix's user, else the distribution's postgres. */
function clusterUser(): string | undefined {
  for (const user of [process.env.PG_MATRIX_USER, 'intake_pg', 'postgres']) {
    if (user && spawnSync('id', ['-u', user]).status === 0) return user;
  }
  return undefined;
}

function asOwner(command: string, args: string[]): void {
  const user = process.getuid?.() === 0 ? clusterUser() : undefined;
  if (user) execFileSync('runuser', ['-u', user, '--', command, ...args], { stdio: 'pipe' });
  else execFileSync(command, args, { stdio: 'pipe' });
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'pipe' });
}

/** A CA, and `name`'s key and certificate signed by it (with the given subjectAltName, if any). */
function makeCertificates(dir: string): void {
  const ca = (name: string) => {
    openssl(
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '2',
        '-subj',
        `/CN=${name}`,
        '-keyout',
        `${name}.key`,
        '-out',
        `${name}.crt`,
      ],
      dir,
    );
  };
  const signed = (name: string, cn: string, san: string | undefined) => {
    openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${cn}`, '-keyout', `${name}.key`, '-out', `${name}.csr`], dir);
    const ext = san ? ['-extfile', `${name}.ext`] : [];
    if (san) writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${san}\n`);
    openssl(
      [
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-days',
        '2',
        '-out',
        `${name}.crt`,
        ...ext,
      ],
      dir,
    );
  };
  ca('ca');
  ca('other-ca');
  // an address only: a connection by name (localhost) is a wrong host name for verify-full
  signed('server', 'intake-sync test server', 'IP:127.0.0.1');
  signed('client', 'tlsclient', undefined);
}

/** Starts the cluster (a few seconds: initdb, certificates, start). */
export async function startTlsPostgres(): Promise<TlsPostgres> {
  const bin = findBinDir();
  if (!bin) throw new Error('no PostgreSQL binaries');
  const root = mkdtempSync(join(tmpdir(), 'intake-sync-tls-'));
  chmodSync(root, 0o755);
  const data = join(root, 'data');
  const certs = join(root, 'certs');
  execFileSync('mkdir', ['-p', data, certs]);
  makeCertificates(certs);
  const user = process.getuid?.() === 0 ? clusterUser() : undefined;
  if (user) {
    const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
    chownSync(data, uid, gid);
    // the server reads its key only when it is its owner's and private
    for (const file of ['server.key', 'server.crt', 'ca.crt']) chownSync(join(certs, file), uid, gid);
  }
  chmodSync(data, 0o700);
  chmodSync(join(certs, 'server.key'), 0o600);
  chmodSync(certs, 0o755);
  for (const file of ['ca.crt', 'other-ca.crt', 'client.crt', 'client.key', 'server.crt']) chmodSync(join(certs, file), 0o644);
  // the client key is read by this process (root or not); a libpq client would insist on 0600 for its own
  const port = await freePort();
  const stop = () => {
    try {
      asOwner(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
    } catch {
      // not running
    }
    rmSync(root, { recursive: true, force: true });
  };
  try {
    asOwner(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C']);
    writeFileSync(
      join(data, 'postgresql.conf'),
      [
        `listen_addresses = '127.0.0.1'`,
        `port = ${port}`,
        `unix_socket_directories = '${data}'`,
        'ssl = on',
        `ssl_cert_file = '${join(certs, 'server.crt')}'`,
        `ssl_key_file = '${join(certs, 'server.key')}'`,
        `ssl_ca_file = '${join(certs, 'ca.crt')}'`,
        'fsync = off',
        'max_connections = 60',
        '',
      ].join('\n'),
      { flag: 'a' },
    );
    // TLS only: no `host` line, so a plaintext connection finds no entry and is refused
    writeFileSync(
      join(data, 'pg_hba.conf'),
      ['local all all trust', 'hostssl all tlsclient 127.0.0.1/32 cert', 'hostssl all all 127.0.0.1/32 trust', ''].join('\n'),
    );
    asOwner(join(bin, 'pg_ctl'), ['-D', data, '-l', join(data, 'server.log'), '-w', '-t', '60', 'start']);
  } catch (error) {
    stop();
    throw error;
  }
  const url = (database: string, params: Record<string, string> = {}, host = '127.0.0.1') => {
    const u = new URL(`postgres://postgres@${host}:${port}/${database}`);
    for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
    return u.toString();
  };
  return {
    port,
    caFile: join(certs, 'ca.crt'),
    otherCaFile: join(certs, 'other-ca.crt'),
    clientCertFile: join(certs, 'client.crt'),
    clientKeyFile: join(certs, 'client.key'),
    url,
    stop,
  };
}
