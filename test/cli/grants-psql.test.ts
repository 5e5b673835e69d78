import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmptyDatabase, NEEDS_POSTGRES, postgresReachable, type EmptyDatabase } from '../helpers/db.js';
import { runCli } from './helpers/run-cli.js';

const reachable = await postgresReachable();

/** Pipes `script` into `psql URL` and resolves with its exit code and stderr. */
function psql(url: string, script: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('psql', ['-X', '-q', url], { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
    child.stdin.end(script);
  });
}

describe.skipIf(!reachable)(`grants | psql fails loudly (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  let empty: EmptyDatabase;
  beforeAll(async () => {
    // a database where the schema was never migrated: the first GRANT is refused
    empty = await createEmptyDatabase('grants_psql');
  });
  afterAll(async () => {
    await empty?.drop();
  });

  it('stops at the first refused statement and exits non-zero, with one error and no "transaction is aborted" wall', async () => {
    const grants = await runCli(['grants', '--role', 'runtime', '--to', 'postgres'], {});
    expect(grants.code).toBe(0);
    const result = await psql(empty.url, grants.stdout);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('schema "intake_sync" does not exist');
    expect(result.stderr).not.toContain('current transaction is aborted');
  });
});
