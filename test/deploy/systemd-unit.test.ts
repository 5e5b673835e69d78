import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DAEMON_NODE_FLAGS } from '../../src/daemon/daemon-node-flags.js';
import { envSchema } from '../../src/config/config.js';
import { findExecutable, skipReason } from '../support/deploy/tools.js';

const UNIT = new URL('../../deploy/systemd/intake-sync.service', import.meta.url);
const text = readFileSync(UNIT, 'utf8');
const systemdAnalyze = findExecutable('systemd-analyze');

/** The unit's [Service] settings (a key may repeat: all values kept). */
function serviceSettings(): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header) {
      section = header[1] ?? '';
      continue;
    }
    if (section !== 'Service') continue;
    const [key = '', ...rest] = line.split('=');
    settings.set(key, [...(settings.get(key) ?? []), rest.join('=')]);
  }
  return settings;
}
const service = serviceSettings();
const get = (key: string) => service.get(key)?.at(-1);

/** systemd time span in ms ("20s", "1min 30s", "500ms"). */
function spanMs(value: string): number {
  let total = 0;
  for (const [, n, unit] of value.matchAll(/(\d+)\s*(ms|s|min|h)?/g)) {
    total += Number(n) * ({ ms: 1, s: 1_000, min: 60_000, h: 3_600_000 }[unit ?? 's'] ?? 1_000);
  }
  return total;
}

describe('deploy/systemd/intake-sync.service', () => {
  it('runs node directly (no shell, no npm) with the daemon flags, from an EnvironmentFile, restarting on failure', () => {
    const [node, ...args] = (get('ExecStart') ?? '').split(/\s+/);
    expect(node).toBe('/usr/bin/node');
    expect(args).toEqual([...DAEMON_NODE_FLAGS, expect.stringMatching(/\/dist\/cli\/main\.js$/), 'run']);
    expect(get('Type')).toBe('exec');
    expect(get('EnvironmentFile')).toMatch(/^\/etc\/intake-sync\/.+\.env$/);
    expect(get('Restart')).toBe('on-failure');
    // bad configuration exits 2: restarting cannot fix it
    expect(get('RestartPreventExitStatus')).toBe('2');
    expect(get('User')).toBeDefined();
    expect(get('User')).not.toBe('root');
  });

  it('waits longer than the daemon shutdown grace before SIGKILL, and signals node', () => {
    const graceMs = envSchema.parse({}).SHUTDOWN_GRACE_MS;
    expect(spanMs(get('TimeoutStopSec') ?? '0')).toBeGreaterThan(graceMs);
    expect(get('KillSignal')).toBe('SIGTERM');
    expect(['mixed', 'control-group']).toContain(get('KillMode'));
  });

  it('sets only variables the config knows, and the hardening options', () => {
    const known = new Set(Object.keys((envSchema as unknown as { shape: Record<string, unknown> }).shape));
    for (const assignment of (service.get('Environment') ?? []).flatMap((v) => v.split(/\s+/))) {
      const name = assignment.split('=')[0] ?? '';
      if (name !== 'NODE_ENV') expect(known.has(name), `${name} is not in src/config/config.ts`).toBe(true);
    }
    for (const [key, value] of Object.entries({
      NoNewPrivileges: 'yes',
      ProtectSystem: 'strict',
      ProtectHome: 'yes',
      PrivateTmp: 'yes',
      PrivateDevices: 'yes',
      ProtectKernelTunables: 'yes',
      ProtectKernelModules: 'yes',
      ProtectControlGroups: 'yes',
      RestrictSUIDSGID: 'yes',
      LockPersonality: 'yes',
      CapabilityBoundingSet: '',
    })) {
      expect(get(key), key).toBe(value);
    }
  });

  it.skipIf(!systemdAnalyze)(
    systemdAnalyze ? 'systemd-analyze verify accepts it' : skipReason('systemd-analyze', 'part of systemd'),
    () => {
      let unit = text;
      // verify checks that ExecStart's binary exists: on a machine with node elsewhere, point it there
      if (!existsSync('/usr/bin/node')) {
        console.warn(`systemd-analyze verify: /usr/bin/node is absent here; verifying with ExecStart=${process.execPath}`);
        unit = unit.replace(/^(ExecStart(?:Pre)?=)\/usr\/bin\/node/gm, `$1${process.execPath}`);
      }
      const dir = mkdtempSync(join(tmpdir(), 'intake-sync-unit-'));
      try {
        writeFileSync(join(dir, 'intake-sync.service'), unit);
        let output = '';
        try {
          output = execFileSync(systemdAnalyze as string, ['verify', join(dir, 'intake-sync.service')], {
            encoding: 'utf8',
            stdio: ['ignore', 'pipe', 'pipe'],
          });
        } catch (error) {
          const { stdout, stderr, status } = error as { stdout?: string; stderr?: string; status?: number };
          throw new Error(`systemd-analyze verify exited ${status}:\n${stdout ?? ''}${stderr ?? ''}`);
        }
        // warnings (an unknown key, a bad value) go to stderr with exit 0: execFileSync hid them, so rerun capturing both
        const warnings = execFileSync('sh', ['-c', `"${systemdAnalyze}" verify "${join(dir, 'intake-sync.service')}" 2>&1`], {
          encoding: 'utf8',
        });
        expect(output + warnings).toBe('');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
