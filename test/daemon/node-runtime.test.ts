import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { judgeNodeRuntime, SUPPORTED_NODE_MAJOR, SUPPORTED_NODE_RANGE } from '../../src/daemon/node-runtime.js';
import { runChild } from '../support/child-process.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('judgeNodeRuntime', () => {
  it.each([
    ['24.11.1', undefined, true],
    ['24.10.0', undefined, false],
    ['25.0.0', undefined, true],
    ['20.20.2', undefined, false],
    ['22.12.0', undefined, false],
    ['', undefined, false],
    ['20.20.2', '1', true],
    ['20.20.2', 'yes', false],
  ])('%s with override %s: ok=%s', (version, override, ok) => {
    expect(judgeNodeRuntime(version, override).ok).toBe(ok);
  });

  it('the refusal names the version found, the version required, how to get it and the override', () => {
    const verdict = judgeNodeRuntime('20.20.2', undefined);
    expect(verdict.ok).toBe(false);
    if (verdict.ok) return;
    expect(verdict.message).toContain('Node.js 20.20.2 found');
    expect(verdict.message).toContain(`Node.js ${SUPPORTED_NODE_RANGE} required`);
    expect(verdict.message).toContain(`nvm install ${SUPPORTED_NODE_MAJOR}`);
    expect(verdict.message).toContain('INTAKE_SYNC_ALLOW_UNSUPPORTED_NODE=1');
    expect(verdict.message.split('\n')).toHaveLength(1);
  });

  it('the override runs with a warning that says it is unsupported', () => {
    const verdict = judgeNodeRuntime('20.20.2', '1');
    expect(verdict).toMatchObject({ ok: true, warning: expect.stringContaining('unsupported') });
  });

  it('package.json engines and the lockfile root say the same supported line', async () => {
    const pkg = (await import('../../package.json', { with: { type: 'json' } })).default as { engines: { node: string } };
    const lock = (await import('../../package-lock.json', { with: { type: 'json' } })).default as {
      packages: Record<string, { engines?: { node: string } }>;
    };
    expect(pkg.engines.node).toBe(SUPPORTED_NODE_RANGE);
    expect(lock.packages['']?.engines?.node).toBe(pkg.engines.node);
  });
});

// the machines of this kind ship Node.js 20 at /usr/bin/node; CI puts 24 first on PATH
const OLD_NODE = '/usr/bin/node';
const oldNodeMajor = existsSync(OLD_NODE)
  ? await new Promise<number>((resolve) =>
      execFile(OLD_NODE, ['-p', 'process.versions.node.split(".")[0]'], (error, stdout) => resolve(error ? 0 : Number(stdout.trim()))),
    )
  : 0;
const haveOldNode = oldNodeMajor > 0 && oldNodeMajor < SUPPORTED_NODE_MAJOR;

describe.skipIf(!haveOldNode)(
  `every command refuses an old Node.js (${haveOldNode ? `${OLD_NODE} is ${oldNodeMajor}` : `no Node.js below ${SUPPORTED_NODE_MAJOR} at ${OLD_NODE}`})`,
  () => {
    function runOn(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stderr: string; stdout: string }> {
      return runChild(OLD_NODE, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH ?? '', ...env },
        timeoutMs: 30_000,
      }).then(({ code, stdout, stderr }) => ({ code: code ?? 1, stdout, stderr }));
    }

    it.each([[['--version']], [['status']], [['run', '--once']]])('intake-sync %j: one line, exit 2', async (args) => {
      const result = await runOn(args);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toContain(`Node.js ${SUPPORTED_NODE_RANGE} required`);
    });

    it('INTAKE_SYNC_ALLOW_UNSUPPORTED_NODE=1 runs it anyway, saying so', async () => {
      const result = await runOn(['--version'], { INTAKE_SYNC_ALLOW_UNSUPPORTED_NODE: '1' });
      expect(result.code).toBe(0);
      expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
      expect(result.stderr).toContain('unsupported');
    });
  },
);
