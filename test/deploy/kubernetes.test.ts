import { readdirSync, readFileSync } from 'node:fs';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { decideRunMode } from '../../src/cli/demo-gate.js';
import { envSchema, loadConfig } from '../../src/config.js';
import { startHealthServer, type HealthServer } from '../../src/ops/health-server.js';
import { createSyncMetrics } from '../../src/ops/metrics.js';
import { defaultMaxPollAgeMs } from '../../src/ops/readiness.js';
import { WorkerState } from '../../src/sync/state/worker-state.js';
import { finalStageUser } from '../faults/harness/dockerfile.js';
import { envList, imageEnv as imageEnvOf, resolvedEnv as resolvedEnvFrom } from './helpers/container-env.js';
import { loadAlertRules } from './helpers/rules.js';

const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');
const K8S = 'deploy/kubernetes/';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Every document of every YAML file under deploy/kubernetes (monitoring/ included), by kind. */
function manifests(): Obj[] {
  const files = [
    ...readdirSync(new URL(K8S, root)).map((f) => K8S + f),
    ...readdirSync(new URL(`${K8S}monitoring/`, root)).map((f) => `${K8S}monitoring/${f}`),
  ];
  return files
    .filter((f) => f.endsWith('.yaml') && !f.endsWith('kustomization.yaml'))
    .flatMap((f) =>
      parseAllDocuments(read(f)).map((doc) => {
        if (doc.errors.length > 0) throw new Error(`${f}: ${doc.errors.map((e) => e.message).join('; ')}`);
        return { ...(doc.toJS() as Obj), __file: f };
      }),
    );
}
const all = manifests();
const one = (kind: string, component?: string): Obj => {
  const found = all.filter((m) => m.kind === kind && (!component || m.metadata?.labels?.['app.kubernetes.io/component'] === component));
  expect(found, `exactly one ${kind}${component ? ` (${component})` : ''}`).toHaveLength(1);
  return found[0] as Obj;
};
const deployment = one('Deployment', 'worker');
const job = one('Job', 'migrate');
const secret = one('Secret');
const pod = deployment.spec.template.spec as Obj;
const container = pod.containers[0] as Obj;
const envValue = (c: Obj, name: string) => envList(c).find((e) => e.name === name);
const knownVariables = new Set(Object.keys((envSchema as unknown as { shape: Record<string, unknown> }).shape));
const resolvedEnv = (c: Obj) => resolvedEnvFrom(c, [secret]);
const imageEnv = () => imageEnvOf(new URL('Dockerfile', root));

describe('deploy/kubernetes against the code', () => {
  let server: HealthServer;
  beforeAll(async () => {
    const state = new WorkerState({ now: () => Date.now() });
    server = await startHealthServer({
      host: '127.0.0.1',
      port: 0,
      state,
      metrics: createSyncMetrics(state, { now: () => Date.now() }, { feed: 'default', pollIntervalMs: 5_000, readyMaxPollAgeMs: 60_000 }),
      probeDatabase: async () => true,
      thresholds: { maxPollAgeMs: 60_000, maxFailures: 5 },
      clock: { now: () => Date.now() },
      log: pino({ level: 'silent' }),
    });
  });
  afterAll(async () => server?.close());

  it('the kustomizations list every manifest file', () => {
    for (const dir of [K8S, `${K8S}monitoring/`]) {
      const listed = (parse(read(`${dir}kustomization.yaml`)) as { resources: string[] }).resources.sort();
      const present = readdirSync(new URL(dir, root))
        .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
        .sort();
      expect(listed).toEqual(present);
    }
  });

  it('every environment variable is one the config knows, and the configuration parses as the image runs it', () => {
    for (const c of [container, job.spec.template.spec.containers[0] as Obj]) {
      for (const { name } of envList(c)) expect(knownVariables.has(name), `${name} is not in src/config.ts`).toBe(true);
    }
    // the Deployment's environment on top of the image's, parsed by the daemon's own schema
    const config = loadConfig({ ...imageEnv(), ...resolvedEnv(container) });
    expect(imageEnv().INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG).toBe('1');
    expect(decideRunMode(config, { demo: false })).toBe('operator');
    for (const required of ['INTAKE_API_BASE_URL', 'INTAKE_API_KEY', 'INTAKE_API_SECRET', 'DATABASE_URL'] as const) {
      expect(config[required], `${required} must be set`).toBeTruthy();
    }
    // the runtime role does not migrate; the Job does, as the owner
    expect(config.MIGRATE_ON_START).toBe(false);
    const jobConfig = loadConfig({ ...imageEnv(), ...resolvedEnv(job.spec.template.spec.containers[0] as Obj) });
    expect(jobConfig.DATABASE_SCHEMA).toBe(config.DATABASE_SCHEMA);
    expect(envValue(job.spec.template.spec.containers[0] as Obj, 'DATABASE_URL')?.valueFrom?.secretKeyRef?.key).toBe('owner-database-url');
    expect(envValue(container, 'DATABASE_URL')?.valueFrom?.secretKeyRef?.key).toBe('database-url');
    expect(job.spec.template.spec.containers[0].args).toEqual(['migrate']);
  });

  it('a doctor init container checks the deployment with exactly the worker environment before the daemon starts', () => {
    const doctor = (pod.initContainers as Obj[]).find((c) => c.name === 'doctor') as Obj;
    expect(doctor, 'initContainers: doctor').toBeDefined();
    expect(doctor.image).toBe(container.image);
    expect(doctor.args).toEqual(['doctor']);
    expect(doctor.env).toEqual(container.env);
    expect(doctor.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
    // the configuration parses as the image runs it, and doctor is a command the CLI has
    expect(decideRunMode(loadConfig({ ...imageEnv(), ...resolvedEnv(doctor) }), { demo: false })).toBe('operator');
    expect(read('src/cli/commands.ts')).toContain('registerDoctorCommand(program)');
  });

  it('2 replicas spread across nodes, a PDB that keeps one, rolling without a gap', () => {
    expect(deployment.spec.replicas).toBe(2);
    const spread = pod.topologySpreadConstraints as Obj[];
    expect(spread.some((s) => s.topologyKey === 'kubernetes.io/hostname' && s.maxSkew === 1)).toBe(true);
    const pdb = one('PodDisruptionBudget');
    expect(pdb.spec.minAvailable).toBe(1);
    expect(pdb.spec.selector.matchLabels).toEqual(deployment.spec.template.metadata.labels);
    expect(deployment.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
  });

  it('probes hit paths and the port the health server serves, with timings consistent with the lease and the poll', async () => {
    const config = loadConfig({ ...imageEnv(), ...resolvedEnv(container) });
    const port = container.ports.find((p: Obj) => p.name === 'http');
    expect(port.containerPort).toBe(config.HEALTH_PORT);
    for (const [probe, path] of [
      ['startupProbe', '/healthz'],
      ['readinessProbe', '/readyz'],
      ['livenessProbe', '/healthz'],
    ] as const) {
      expect(container[probe].httpGet, probe).toEqual({ path, port: 'http' });
      const response = await fetch(`http://127.0.0.1:${server.port}${path}`);
      expect(response.status, `${path} is served`).not.toBe(404);
    }
    const { readinessProbe: ready, livenessProbe: live } = container;
    // /readyz waits up to 2 s for the database (src/ops/database-probe.ts)
    expect(ready.timeoutSeconds * 1000).toBeGreaterThan(2_000);
    // readiness notices a stale leader well within the poll-age limit /readyz applies
    expect(ready.periodSeconds * 1000).toBeLessThanOrEqual(defaultMaxPollAgeMs(config.POLL_INTERVAL_MS, config.READY_MAX_POLL_AGE_MS) / 3);
    // a pod is not restarted while the lease can still be changing hands
    expect(live.periodSeconds * live.failureThreshold * 1000).toBeGreaterThanOrEqual(2 * config.LEASE_TTL_MS);
  });

  it('the grace period exceeds SHUTDOWN_GRACE_MS', () => {
    const config = loadConfig({ ...imageEnv(), ...resolvedEnv(container) });
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(config.SHUTDOWN_GRACE_MS);
  });

  it("runs as the image's non-root user with a read-only root filesystem, through the image's node ENTRYPOINT", () => {
    // node:20-slim's `node` user is uid 1000
    expect(finalStageUser(read('Dockerfile'))).toBe('node');
    for (const spec of [pod, job.spec.template.spec as Obj]) {
      expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000 });
      for (const c of spec.containers as Obj[]) {
        expect(c.securityContext).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
        expect(c.command, 'the ENTRYPOINT (node, exec form) must stay PID 1').toBeUndefined();
      }
    }
  });

  it('memory is sized from the bench: requests above the measured peak RSS, limits with headroom', () => {
    const peaks = readdirSync(new URL('bench/results/', root))
      .filter((f) => f.endsWith('.json'))
      .map((f) => Number((JSON.parse(read(`bench/results/${f}`)) as { summary?: { peak_rss_mb?: number } }).summary?.peak_rss_mb ?? 0));
    const peakMb = Math.max(...peaks);
    expect(peakMb).toBeGreaterThan(100);
    const mib = (q: string) => Number(/^(\d+)Mi$/.exec(q)?.[1] ?? Number.NaN);
    expect(mib(container.resources.requests.memory)).toBeGreaterThanOrEqual(peakMb);
    expect(mib(container.resources.limits.memory)).toBeGreaterThanOrEqual(peakMb * 1.5);
  });

  it('the Service keeps not-ready pods scraped, and the ServiceMonitor scrapes it as job intake-sync', () => {
    const service = one('Service');
    expect(service.metadata.name).toBe('intake-sync');
    expect(service.spec.publishNotReadyAddresses).toBe(true);
    expect(service.spec.selector).toEqual(deployment.spec.template.metadata.labels);
    expect(service.spec.ports).toContainEqual(expect.objectContaining({ name: 'http', targetPort: 'http' }));
    const monitor = one('ServiceMonitor');
    expect(Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => service.metadata.labels[k] === v)).toBe(true);
    expect(monitor.spec.endpoints).toContainEqual(expect.objectContaining({ port: 'http', path: '/metrics' }));
    // the alert rules select the job by this name
    expect(read('deploy/prometheus/alerts.yaml')).toContain(`job="${service.metadata.name}"`);
  });

  it('the PrometheusRule carries exactly the rules promtool tests (regenerate: node --import tsx scripts/render-prometheus-rule.ts)', () => {
    expect(one('PrometheusRule').spec.groups).toEqual(loadAlertRules().groups);
  });
});
