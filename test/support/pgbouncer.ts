import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './faults/free-port.js';
import { findExecutable } from './deploy/tools.js';
import { ADMIN_URL } from './db.js';

/** The Debian package's binary, or undefined when PgBouncer is not installed. */
export const PGBOUNCER = findExecutable('pgbouncer');

/** Why a PgBouncer test is skipped. */
export const NEEDS_PGBOUNCER = 'needs PgBouncer (apt-get install pgbouncer; .ci/run installs it) and a real PostgreSQL';

export interface PgBouncer {
  port: number;
  /** `url` with its host and port swapped for the pooler's */
  through(url: string): string;
  /** what PgBouncer logged (connections, errors), for a failing test's message */
  log(): string;
  stop(): Promise<void>;
}

/**
 * Starts a real PgBouncer on a free port in front of the test server (ADMIN_URL's host and
 * port), trust auth, in the given pool mode, with the Debian defaults otherwise: unknown startup
 * parameters are refused, prepared statements are not tracked (1.18). PgBouncer refuses to run as
 * root, so as root it is told to switch to the postgres user.
 */
export async function startPgBouncer(poolMode: 'transaction' | 'session', poolSize = 4): Promise<PgBouncer> {
  if (!PGBOUNCER) throw new Error(NEEDS_PGBOUNCER);
  const server = new URL(ADMIN_URL);
  const dir = mkdtempSync(join(tmpdir(), 'intake-sync-pgbouncer-'));
  chmodSync(dir, 0o755);
  const port = await freePort();
  writeFileSync(join(dir, 'users.txt'), `"${decodeURIComponent(server.username) || 'postgres'}" ""\n`, { mode: 0o644 });
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      `pool_mode = ${poolMode}`,
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 200',
      // quick to notice a server connection that died with a killed client
      'server_check_delay = 1',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(PGBOUNCER, [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  };
  // up once it accepts a TCP connection
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`pgbouncer exited at start:\n${output}`);
    }
    if (await accepts(port)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`pgbouncer did not listen on ${port} within 15 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    through(url: string) {
      const pooled = new URL(url);
      pooled.hostname = '127.0.0.1';
      pooled.port = String(port);
      return pooled.toString();
    },
    log: () => output,
    stop,
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
