import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { DAEMON_NODE_FLAGS } from '../../src/cli/daemon-node-flags.js';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

describe('the daemon is launched with DAEMON_NODE_FLAGS everywhere it is launched', () => {
  test('npm start', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.start ?? '';
    // exec: the shell npm runs the script in becomes node, so npm's SIGTERM reaches the daemon
    const [exec, node, ...args] = start.split(/\s+/);
    expect(exec).toBe('exec');
    expect(node).toBe('node');
    expect(args.slice(0, DAEMON_NODE_FLAGS.length)).toEqual([...DAEMON_NODE_FLAGS]);
    expect(args.slice(DAEMON_NODE_FLAGS.length)).toEqual(['dist/cli/main.js', 'run']);
  });

  test('the Docker image', () => {
    const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(read('Dockerfile'))?.[1];
    expect(entrypoint, 'an exec-form ENTRYPOINT').toBeDefined();
    expect(JSON.parse(entrypoint as string)).toEqual(['node', ...DAEMON_NODE_FLAGS, 'dist/cli/main.js']);
  });

  test('the systemd unit', () => {
    const execStart = /^ExecStart=(.*)$/m.exec(read('deploy/systemd/intake-sync.service'))?.[1] ?? '';
    const [node, ...args] = execStart.split(/\s+/);
    expect(node).toMatch(/\/node$/);
    expect(args.slice(0, DAEMON_NODE_FLAGS.length)).toEqual([...DAEMON_NODE_FLAGS]);
  });

  test('the bench drain worker', () => {
    expect(read('bench/drain.ts')).toContain("spawnNode('drain worker', [...DAEMON_NODE_FLAGS, workerEntry]");
  });
});
