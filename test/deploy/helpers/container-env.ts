import { readFileSync } from 'node:fs';
import { expect } from 'vitest';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export const envList = (c: Obj) => (c.env ?? []) as Array<{ name: string; value?: string; valueFrom?: Obj }>;

/** The environment a container gets: literal values, and secret keys resolved from the given Secrets. */
export function resolvedEnv(c: Obj, secrets: readonly Obj[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of envList(c)) {
    if (entry.value !== undefined) env[entry.name] = String(entry.value);
    const ref = entry.valueFrom?.secretKeyRef as { name: string; key: string; optional?: boolean } | undefined;
    if (ref) {
      const secret = secrets.find((s) => s.metadata?.name === ref.name);
      expect(secret, `${entry.name}: Secret ${ref.name} is not in the manifests`).toBeDefined();
      const value = secret?.stringData?.[ref.key];
      if (!ref.optional) expect(value, `${entry.name}: key ${ref.key} is missing from Secret ${ref.name}`).toBeDefined();
      if (value !== undefined) env[entry.name] = String(value);
    }
  }
  return env;
}

/** ENV lines of the Dockerfile's final stage: what the image sets before the manifest's env. */
export function imageEnv(dockerfilePath: URL): Record<string, string> {
  const dockerfile = readFileSync(dockerfilePath, 'utf8').replace(/\\\r?\n/g, ' ');
  const stages = dockerfile.split(/^FROM /m);
  const last = stages[stages.length - 1] ?? '';
  const env: Record<string, string> = {};
  for (const line of last.split('\n')) {
    const match = /^ENV\s+(.*)$/.exec(line.trim());
    for (const pair of match?.[1]?.split(/\s+/) ?? []) {
      const [key, value] = pair.split('=');
      if (key && value !== undefined) env[key] = value;
    }
  }
  return env;
}
