import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { envSchema, loadConfig } from '../../src/config/config.js';

const read = (name: string) => readFileSync(new URL(`../../deploy/systemd/${name}`, import.meta.url), 'utf8');

/** A unit's [Service] settings (a key may repeat: all values kept). */
function serviceSettings(text: string): Map<string, string[]> {
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
const consoleUnit = serviceSettings(read('intake-sync-console.service'));
const workerUnit = serviceSettings(read('intake-sync.service'));
const HARDENING = [
  'NoNewPrivileges',
  'CapabilityBoundingSet',
  'AmbientCapabilities',
  'ProtectSystem',
  'ProtectHome',
  'PrivateTmp',
  'PrivateDevices',
  'ProtectKernelTunables',
  'ProtectKernelModules',
  'ProtectKernelLogs',
  'ProtectControlGroups',
  'ProtectClock',
  'ProtectHostname',
  'ProtectProc',
  'RestrictAddressFamilies',
  'RestrictNamespaces',
  'RestrictRealtime',
  'RestrictSUIDSGID',
  'LockPersonality',
  'RemoveIPC',
  'SystemCallArchitectures',
  'SystemCallFilter',
  'UMask',
];

describe('deploy/systemd/intake-sync-console.service', () => {
  it('runs `console` with node directly, as the package user, from its own environment file', () => {
    expect(consoleUnit.get('Type')).toEqual(['exec']);
    expect(consoleUnit.get('ExecStart')?.[0]).toMatch(/^\/usr\/bin\/node \S+\/dist\/cli\/main\.js console$/);
    expect(consoleUnit.get('User')).toEqual(workerUnit.get('User'));
    expect(consoleUnit.get('EnvironmentFile')).toEqual(['/etc/intake-sync/console.env']);
  });

  it('listens on loopback only, set after the environment file, with variables the config knows', () => {
    const assignments = (consoleUnit.get('Environment') ?? []).flatMap((v) => v.split(/\s+/));
    const known = new Set(Object.keys((envSchema as unknown as { shape: Record<string, unknown> }).shape));
    const env: Record<string, string> = {};
    for (const assignment of assignments) {
      const [name = '', value = ''] = assignment.split('=');
      if (name !== 'NODE_ENV') expect(known.has(name), `${name} is not in src/config/config.ts`).toBe(true);
      env[name] = value;
    }
    expect(env.CONSOLE_HOST).toBe('127.0.0.1');
    const config = loadConfig({ ...env, DATABASE_URL: 'postgres://db.example:5432/vendor?sslmode=verify-full' });
    expect(config.CONSOLE_HOST).toBe('127.0.0.1');
    expect(config.CONSOLE_PORT).toBe(8081);
  });

  it('carries every hardening option of the worker unit, with the same values', () => {
    for (const key of HARDENING) {
      expect(workerUnit.get(key), `worker ${key}`).toBeDefined();
      expect(consoleUnit.get(key), key).toEqual(workerUnit.get(key));
    }
    expect(consoleUnit.get('MemoryMax')).toBeDefined();
  });
});
