import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../faults/free-port.js';

/**
 * A throwaway PostgreSQL cluster that asks for passwords (scram-sha-256 for every connection), from
 * the machine's own server binaries, on 127.0.0.1 and a free port: the console's password checks
 * against a server that really checks them. initdb refuses root, so as root the cluster belongs to
 * the `postgres` system user. Undefined (the test skips, saying why) without binaries or that user.
 */
export interface PasswordServer {
  port: number;
  /** the superuser's URL, with its password */
  adminUrl(database: string): string;
  stop(): void;
}

const SUPERUSER_PASSWORD = 'scram-test-superuser';

function binDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root)
    .filter((d) => existsSync(join(root, d, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return majors[0] && join(root, majors[0], 'bin');
}

/** Why the password server cannot run here, or undefined when it can. */
export function passwordServerMissing(): string | undefined {
  if (!binDir()) return 'needs PostgreSQL server binaries under /usr/lib/postgresql/*/bin';
  if (process.getuid?.() === 0) {
    try {
      execFileSync('id', ['-u', 'postgres'], { stdio: 'ignore' });
    } catch {
      return 'runs as root and there is no postgres user to own the cluster';
    }
  }
  return undefined;
}

export async function startPasswordServer(): Promise<PasswordServer> {
  const bin = binDir() as string;
  const asRoot = process.getuid?.() === 0;
  const run = (tool: string, args: string[]) =>
    asRoot
      ? execFileSync('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args], { stdio: 'pipe', timeout: 120_000 })
      : execFileSync(join(bin, tool), args, { stdio: 'pipe', timeout: 120_000 });
  const dir = mkdtempSync(join(tmpdir(), 'console-scram-'));
  const data = join(dir, 'data');
  const pwfile = join(dir, 'pw');
  writeFileSync(pwfile, `${SUPERUSER_PASSWORD}\n`);
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    chownSync(dir, uid, gid);
    chownSync(pwfile, uid, gid);
  }
  chmodSync(dir, 0o700);
  const port = await freePort();
  try {
    run('initdb', ['-D', data, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${pwfile}`, '--no-sync', '-E', 'UTF8']);
    run('pg_ctl', [
      '-D',
      data,
      '-w',
      '-t',
      '60',
      '-l',
      join(dir, 'log'),
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      'start',
    ]);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    adminUrl: (database) => `postgres://postgres:${SUPERUSER_PASSWORD}@127.0.0.1:${port}/${database}`,
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
