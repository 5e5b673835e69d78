import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../../src/config/config.js';
import { DAEMON_POOL_CONNECTIONS } from '../../src/db/connection.js';
import { imageEnv, resolvedEnv } from '../support/deploy/container-env.js';
import { findExecutable, skipReason } from '../support/deploy/tools.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const root = new URL('../../', import.meta.url);
const kubectl = findExecutable('kubectl');
const skip = kubectl ? false : skipReason('kubectl', 'its built-in kustomize renders the overlay');
// besides the pool: the page transaction's connection and the lease session (src/db/connection.ts)
const SESSIONS_PER_REPLICA = DAEMON_POOL_CONNECTIONS + 2;

/** The "Scaling out" section of docs/operations.md, where the kit's figures are written down. */
function scalingSection(): string {
  const text = readFileSync(new URL('docs/operations.md', root), 'utf8');
  const start = text.indexOf('\n## Scaling out');
  expect(start, 'docs/operations.md has a "Scaling out" section').toBeGreaterThan(0);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

/**
 * deploy/kubernetes-fleet (hundreds of feeds over several replicas) rendered by kustomize: the
 * replicas spread over nodes, one disrupted at a time, their share of the operator's limit and their
 * database sessions as docs/operations.md states them.
 */
describe.skipIf(skip)(`deploy/kubernetes-fleet against the code and the docs${skip ? ` (${skip})` : ''}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8s-fleet-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const kit = join(dir, 'deploy');
  for (const part of ['kubernetes', 'kubernetes-several-feeds', 'kubernetes-fleet']) {
    cpSync(new URL(`deploy/${part}`, root).pathname, join(kit, part), { recursive: true });
    const secrets = join(kit, part, 'secrets');
    for (const file of readdirSync(join(kit, part)).includes('secrets') ? readdirSync(secrets) : []) {
      if (file.endsWith('.env.example')) cpSync(join(secrets, file), join(secrets, file.replace(/\.example$/, '')));
    }
  }
  const rendered = kubectl
    ? parseAllDocuments(execFileSync(kubectl, ['kustomize', join(kit, 'kubernetes-fleet')], { encoding: 'utf8' })).map(
        (d) => d.toJS() as Obj,
      )
    : [];
  const worker = () => rendered.find((m) => m.kind === 'Deployment' && m.metadata.name === 'intake-sync') as Obj;

  it('replicas spread over nodes (hard) and zones (as far as they go), counting only the worker pods of one revision', () => {
    const deployment = worker();
    expect(deployment.spec.replicas).toBe(4);
    const podLabels = deployment.spec.template.metadata.labels as Record<string, string>;
    const constraints = deployment.spec.template.spec.topologySpreadConstraints as Obj[];
    const byKey = new Map(constraints.map((c) => [c.topologyKey as string, c]));
    expect(byKey.get('kubernetes.io/hostname')).toMatchObject({ maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule' });
    expect(byKey.get('topology.kubernetes.io/zone')).toMatchObject({ maxSkew: 1, whenUnsatisfiable: 'ScheduleAnyway' });
    for (const constraint of constraints) {
      // a selector the pods do not carry would spread nothing, silently
      expect(constraint.labelSelector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
      for (const [key, value] of Object.entries(constraint.labelSelector.matchLabels as Record<string, string>))
        expect(podLabels[key]).toBe(value);
      expect(constraint.matchLabelKeys).toEqual(['pod-template-hash']);
    }
  });

  it('a PodDisruptionBudget takes one worker at a time, and only workers', () => {
    const deployment = worker();
    const pdbs = rendered.filter((m) => m.kind === 'PodDisruptionBudget');
    expect(pdbs).toHaveLength(1);
    const pdb = pdbs[0] as Obj;
    expect(pdb.spec.maxUnavailable).toBe(1);
    expect(pdb.spec.minAvailable).toBeUndefined();
    expect(pdb.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    const selects = (labels: Record<string, string>) =>
      Object.entries(pdb.spec.selector.matchLabels as Record<string, string>).every(([key, value]) => labels[key] === value);
    for (const other of rendered.filter((m) => m.kind === 'Deployment' && m !== deployment)) {
      expect(selects(other.spec.template.metadata.labels), `the PDB must not select ${other.metadata.name}'s pods`).toBe(false);
    }
    // a rolling update adds a replica before it stops one: the share never drops below the replica count
    expect(deployment.spec.strategy.rollingUpdate).toEqual({ maxUnavailable: 0, maxSurge: 1 });
  });

  it("OPERATOR_MAX_RPS is the operator's limit over replicas + maxSurge, for the worker and its doctor alike", () => {
    const deployment = worker();
    const pod = deployment.spec.template.spec as Obj;
    const secrets = rendered.filter((m) => m.kind === 'Secret');
    const env = resolvedEnv(pod.containers[0] as Obj, secrets);
    const configMap = rendered.find((m) => m.kind === 'ConfigMap' && m.metadata.name === 'intake-sync-feeds') as Obj;
    const feedsFile = join(dir, basename(env.FEEDS_FILE as string));
    writeFileSync(feedsFile, configMap.data[basename(env.FEEDS_FILE as string)] as string);
    const config = loadConfig({ ...imageEnv(new URL('Dockerfile', root)), ...env, FEEDS_FILE: feedsFile });
    const limit = Number(deployment.metadata.annotations['intake-sync/operator-limit-rps']);
    expect(limit).toBeGreaterThan(0);
    const atOnce = deployment.spec.replicas + deployment.spec.strategy.rollingUpdate.maxSurge;
    expect(config.OPERATOR_MAX_RPS).toBeGreaterThan(0);
    expect(config.OPERATOR_MAX_RPS * atOnce).toBeLessThanOrEqual(limit);
    const doctor = (pod.initContainers as Obj[]).find((c) => c.name === 'doctor') as Obj;
    expect(resolvedEnv(doctor, secrets).OPERATOR_MAX_RPS).toBe(String(config.OPERATOR_MAX_RPS));
    // the docs name the kit's figures
    const docs = scalingSection();
    expect(docs).toContain(`OPERATOR_MAX_RPS=${config.OPERATOR_MAX_RPS}`);
    expect(docs).toContain(`${atOnce} × ${config.OPERATOR_MAX_RPS} = ${atOnce * config.OPERATOR_MAX_RPS}`);
  });

  it('memory: the request covers a replica of four as bench:fleet measured it, the limit one replica leading every feed and a drain', () => {
    const container = worker().spec.template.spec.containers[0] as Obj;
    const mebibytes = (quantity: string) => {
      const match = /^(\d+)Mi$/.exec(quantity);
      expect(match, `${quantity} in Mi`).not.toBeNull();
      return Number(match?.[1]);
    };
    const measured = (file: string, replicas: number) => {
      const results = JSON.parse(readFileSync(new URL(`bench/results/${file}`, root), 'utf8')) as { runs: Obj[] };
      const run = results.runs.find((r) => r.replicas === replicas) as Obj;
      expect(run.feeds).toBe(500);
      return Math.max(...(run.idle.replicas as Obj[]).map((r) => r.rss_mb_max as number));
    };
    // the bench's rss_mb is /proc's kB over 1024: mebibytes, as the manifest's Mi
    expect(mebibytes(container.resources.requests.memory)).toBeGreaterThanOrEqual(measured('2026-11-29-fleet-4-2.json', 4));
    // one replica leading all 500, plus the most one feed's drain added above its idle RSS (performance.md)
    const DRAIN_MB = 85;
    expect(mebibytes(container.resources.limits.memory)).toBeGreaterThanOrEqual(measured('2026-11-29-fleet-1.json', 1) + DRAIN_MB);
  });

  it("the fleet's database sessions, replicas + maxSurge at once, are what docs/operations.md counts against max_connections", () => {
    const deployment = worker();
    const atOnce = deployment.spec.replicas + deployment.spec.strategy.rollingUpdate.maxSurge;
    const docs = scalingSection();
    expect(docs).toContain(`${SESSIONS_PER_REPLICA} database sessions per replica`);
    expect(docs).toContain(`${atOnce} × ${SESSIONS_PER_REPLICA} = ${atOnce * SESSIONS_PER_REPLICA} database sessions`);
  });
});
