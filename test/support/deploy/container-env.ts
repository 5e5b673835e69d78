import { readdirSync, readFileSync } from 'node:fs';
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
      // kustomize's generated Secrets carry base64 `data`; hand-written ones `stringData`
      const encoded = secret?.data?.[ref.key] as string | undefined;
      const value = secret?.stringData?.[ref.key] ?? (encoded === undefined ? undefined : Buffer.from(encoded, 'base64').toString('utf8'));
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

/** KEY=value lines of an env file (kustomize's secretGenerator `envs` format): comments and blanks skipped. */
export function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const at = trimmed.indexOf('=');
    env[trimmed.slice(0, at)] = trimmed.slice(at + 1);
  }
  return env;
}

/**
 * The Secrets a kustomization's secretGenerator makes, as if each `secrets/NAME.env` were its
 * committed `NAME.env.example`: name from the kustomization, stringData from the example.
 */
export function exampleSecrets(dir: URL): Obj[] {
  const kustomization = readFileSync(new URL('kustomization.yaml', dir), 'utf8');
  const generators = [...kustomization.matchAll(/- name: (\S+)\n\s+envs: \[([^\]]+)\]/g)];
  expect(generators.length, 'a secretGenerator with envs files').toBeGreaterThan(0);
  const present = new Set(readdirSync(new URL('secrets/', dir)));
  return generators.map(([, name, file]) => {
    const example = `${(file as string).replace(/^secrets\//, '')}.example`;
    expect(present.has(example), `${file}: the committed example ${example}`).toBe(true);
    return { kind: 'Secret', metadata: { name }, stringData: parseEnvFile(readFileSync(new URL(`secrets/${example}`, dir), 'utf8')) };
  });
}
