import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { DAEMON_NODE_FLAGS, RELAUNCHED_ENV, relaunchArgv } from '../../src/daemon/daemon-node-flags.js';

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

  test('the bench drain worker and idle daemon, unless a bench names other flags', () => {
    for (const file of ['bench/drain.ts', 'bench/idle.ts']) {
      const text = read(file);
      expect(text).toContain('nodeFlags: readonly string[] = DAEMON_NODE_FLAGS');
      expect(text).toMatch(/spawnNode\('(drain worker|daemon \(idle\))', \[\.\.\.nodeFlags, /);
    }
  });
});

describe('relaunchArgv: `run` started any other way (npx, a global install) restarts with DAEMON_NODE_FLAGS', () => {
  const node = '/usr/bin/node';
  test.each([
    ['run without the flags', [], ['run'], {}, [node, ...DAEMON_NODE_FLAGS, 'main.js', 'run']],
    [
      'run --once, the own flags kept first',
      ['--import', 'tsx'],
      ['run', '--once'],
      {},
      [node, '--import', 'tsx', ...DAEMON_NODE_FLAGS, 'main.js', 'run', '--once'],
    ],
    ['a global option before the command', [], ['--no-color', 'run'], {}, [node, ...DAEMON_NODE_FLAGS, 'main.js', '--no-color', 'run']],
    [
      'the flags given, another size',
      ['--max-semi-space-size=8', '--optimize-for-size', '--no-maglev', '--no-wasm-tier-up', '--no-wasm-dynamic-tiering'],
      ['run'],
      {},
      undefined,
    ],
    [
      'one flag given: only the others are added',
      ['--max-semi-space-size=8'],
      ['run'],
      {},
      [
        node,
        '--max-semi-space-size=8',
        '--optimize-for-size',
        '--no-maglev',
        '--no-wasm-tier-up',
        '--no-wasm-dynamic-tiering',
        'main.js',
        'run',
      ],
    ],
    [
      "a flag turned the other way (--maglev) is the operator's choice",
      ['--max-semi-space-size=1', '--optimize-for-size', '--maglev', '--no-wasm-tier-up', '--no-wasm-dynamic-tiering'],
      ['run'],
      {},
      undefined,
    ],
    [
      'the flags in NODE_OPTIONS',
      [],
      ['run'],
      {
        NODE_OPTIONS:
          '--enable-source-maps --max-semi-space-size=4 --optimize-for-size --no-maglev --no-wasm-tier-up --no-wasm-dynamic-tiering',
      },
      undefined,
    ],
    ['already relaunched', [], ['run'], { [RELAUNCHED_ENV]: '1' }, undefined],
    ['a short-lived command', [], ['status'], {}, undefined],
    ['no command', [], ['--version'], {}, undefined],
  ] as const)('%s', (_, execArgv, args, env, expected) => {
    expect(relaunchArgv(node, execArgv, [node, 'main.js', ...args], env)).toEqual(expected);
  });
});
