import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { decideRunMode } from '../../src/daemon/demo-gate.js';
import { envSchema, loadConfig } from '../../src/config/config.js';
import { startHealthServer, type HealthServer } from '../../src/ops/health-server.js';
import { createSyncMetrics } from '../../src/ops/metrics.js';
import { defaultMaxPollAgeMs } from '../../src/ops/readiness.js';
import { WorkerState } from '../../src/sync/state/worker-state.js';
import { finalStageUser } from '../support/faults/dockerfile.js';
import { envList, exampleSecrets, imageEnv as imageEnvOf, resolvedEnv as resolvedEnvFrom } from '../support/deploy/container-env.js';
import { loadAlertRules } from '../support/deploy/rules.js';
import { findExecutable } from '../support/deploy/tools.js';

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
/** The Secrets kustomize generates from the env files, filled in from the committed *.example files. */
const secrets = exampleSecrets(new URL(K8S, root));
const secret = secrets.find((s) => s.metadata.name === 'intake-sync') as Obj;
const pod = deployment.spec.template.spec as Obj;
const container = pod.containers[0] as Obj;
const envValue = (c: Obj, name: string) => envList(c).find((e) => e.name === name);
const knownVariables = new Set(Object.keys((envSchema as unknown as { shape: Record<string, unknown> }).shape));
const resolvedEnv = (c: Obj) => resolvedEnvFrom(c, secrets);
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
      for (const { name } of envList(c)) expect(knownVariables.has(name), `${name} is not in src/config/config.ts`).toBe(true);
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

  it('2 replicas spread across nodes, a PDB that takes one at a time (at any replica count), rolling without a gap', () => {
    expect(deployment.spec.replicas).toBe(2);
    const spread = pod.topologySpreadConstraints as Obj[];
    expect(
      spread.some((s) => s.topologyKey === 'kubernetes.io/hostname' && s.maxSkew === 1 && s.whenUnsatisfiable === 'DoNotSchedule'),
    ).toBe(true);
    const pdb = one('PodDisruptionBudget');
    expect(pdb.spec.maxUnavailable).toBe(1);
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
    // the node image's `node` user is uid 1000
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
    const service = all.find((m) => m.kind === 'Service' && m.metadata.name === 'intake-sync') as Obj;
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

describe('deploy/kubernetes is safe to apply (issue 20 §4)', () => {
  const policies = all.filter((m) => m.kind === 'NetworkPolicy');
  const jobContainer = job.spec.template.spec.containers[0] as Obj;
  const secretRefs = (c: Obj) =>
    envList(c).flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef as { name: string; key: string }] : []));

  it('applies no Secret: they are generated from git-ignored env files, whose committed examples hold every key', () => {
    expect(all.filter((m) => m.kind === 'Secret')).toEqual([]);
    const gitignore = read('.gitignore');
    expect(gitignore).toContain('deploy/kubernetes*/secrets/*.env');
    for (const c of [container, jobContainer]) {
      for (const ref of secretRefs(c)) {
        const generated = secrets.find((s) => s.metadata.name === ref.name);
        expect(generated, `${ref.name} is generated`).toBeDefined();
        expect(Object.keys(generated?.stringData ?? {}), `${ref.name} has ${ref.key}`).toContain(ref.key);
      }
    }
  });

  it("the owner's database URL lives in its own Secret, which only the migrate Job reads", () => {
    const owner = secrets.find((s) => s.metadata.name === 'intake-sync-owner') as Obj;
    expect(Object.keys(owner.stringData)).toEqual(['owner-database-url']);
    expect(Object.keys(secret.stringData)).not.toContain('owner-database-url');
    expect(secretRefs(jobContainer)).toEqual([{ name: 'intake-sync-owner', key: 'owner-database-url' }]);
    expect(secretRefs(container).map((r) => r.name)).not.toContain('intake-sync-owner');
    expect(JSON.stringify(deployment)).not.toContain('intake-sync-owner');
  });

  /** Does a NetworkPolicy's podSelector pick pods with these labels? */
  const selects = (p: Obj, labels: Record<string, string>) =>
    Object.entries(p.spec.podSelector.matchLabels as Record<string, string>).every(([k, v]) => labels[k] === v);
  const workerLabels = deployment.spec.template.metadata.labels as Record<string, string>;
  const jobLabels = job.spec.template.metadata.labels as Record<string, string>;
  const workerPolicies = policies.filter((p) => selects(p, workerLabels));
  const jobPolicies = policies.filter((p) => selects(p, jobLabels));
  /** Policies add up: every egress rule of every policy that selects the pod. */
  const egressOf = (selected: Obj[]) => selected.flatMap((p) => (p.spec.egress ?? []) as Obj[]);
  const allows = (rules: Obj[], namespace: string | undefined, port: number, protocol = 'TCP') =>
    rules.some(
      (r) =>
        r.ports.some((p: Obj) => p.port === port && p.protocol === protocol) &&
        r.to.some((t: Obj) => (namespace ? t.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'] === namespace : t.ipBlock)),
    );
  const databaseUrls = (names: string[]) =>
    secrets
      .filter((s) => names.includes(s.metadata.name))
      .flatMap((s) =>
        Object.entries(s.stringData as Record<string, string>)
          .filter(([k]) => k.endsWith('database-url') && k !== 'console-database-url')
          .map(([, v]) => new URL(v)),
      );

  it('the worker and the migrate Job are each selected by their own policies only, which admit only the monitoring namespace, on the metrics port', () => {
    expect(workerPolicies.map((p) => p.metadata.name).sort()).toEqual(['intake-sync', 'intake-sync-operator-egress']);
    expect(jobPolicies.map((p) => p.metadata.name)).toEqual(['intake-sync-migrate']);
    // every policy is one of the two: nothing else selects (or forgets) a pod of the kit
    expect(policies).toHaveLength(4); // + intake-sync-console (test/deploy/console-kubernetes.test.ts)
    const worker = policies.find((p) => p.metadata.name === 'intake-sync') as Obj;
    expect(worker.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(worker.spec.ingress).toEqual([
      {
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
        ports: [{ port: 'http', protocol: 'TCP' }],
      },
    ]);
    const config = loadConfig({ ...imageEnv(), ...resolvedEnv(container) });
    expect(container.ports.find((p: Obj) => p.name === 'http').containerPort).toBe(config.HEALTH_PORT);
  });

  it('migrate Job (the owner credentials): DNS and Postgres only, no ingress, no address outside the cluster', () => {
    const [policy] = jobPolicies as [Obj];
    expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(policy.spec.ingress ?? []).toEqual([]);
    const rules = egressOf(jobPolicies);
    expect(rules).toHaveLength(2);
    expect(allows(rules, 'kube-system', 53, 'UDP')).toBe(true);
    expect(allows(rules, 'kube-system', 53, 'TCP')).toBe(true);
    const urls = databaseUrls(['intake-sync-owner']);
    expect(urls).toHaveLength(1);
    for (const url of urls) expect(allows(rules, url.hostname.split('.')[1], Number(url.port || 5432)), url.host).toBe(true);
    // no ipBlock, no port beyond DNS and the owner's database port
    expect(rules.flatMap((r) => r.to as Obj[]).some((t) => t.ipBlock)).toBe(false);
    expect(new Set(rules.flatMap((r) => (r.ports as Obj[]).map((p) => p.port)))).toEqual(new Set([53, 5432]));
  });

  it("worker egress: DNS, the database and pooler every example URL points at, and HTTPS to the operator's addresses from operator-egress.yaml: nothing else", () => {
    const rules = egressOf(workerPolicies);
    expect(allows(rules, 'kube-system', 53, 'UDP')).toBe(true);
    expect(allows(rules, 'kube-system', 53, 'TCP')).toBe(true);
    const urls = databaseUrls(['intake-sync']);
    expect(urls.length).toBe(2);
    for (const url of urls) {
      // <service>.<namespace>.svc
      expect(allows(rules, url.hostname.split('.')[1], Number(url.port || 5432)), `${url.hostname}:${url.port}`).toBe(true);
    }
    const config = loadConfig({ ...imageEnv(), ...resolvedEnv(container) });
    const operator = new URL(config.INTAKE_API_BASE_URL ?? '');
    expect(operator.protocol).toBe('https:');
    expect(allows(rules, undefined, Number(operator.port || 443))).toBe(true);
    // the operator's addresses live in one file, and are addresses, never "the whole internet"
    const external = rules.filter((r) => r.to.some((t: Obj) => t.ipBlock));
    expect(new Set(external.map((r) => policies.find((p) => (p.spec.egress as Obj[] | undefined)?.includes(r))?.__file))).toEqual(
      new Set([`${K8S}operator-egress.yaml`]),
    );
    for (const rule of external) {
      expect(rule.ports).toEqual([{ port: 443, protocol: 'TCP' }]);
      for (const { ipBlock } of rule.to as { ipBlock: { cidr: string; except?: string[] } }[]) {
        const [address, bits] = ipBlock.cidr.split('/');
        expect(isIP(address ?? ''), ipBlock.cidr).not.toBe(0);
        // a default route with holes (0.0.0.0/0 except private ranges) is every public address
        expect(Number(bits), `${ipBlock.cidr} is narrower than /8`).toBeGreaterThanOrEqual(isIP(address ?? '') === 4 ? 8 : 16);
        expect(ipBlock.except, `${ipBlock.cidr}: no except list (a range with holes)`).toBeUndefined();
      }
    }
    // and nothing else leaves the cluster: every other rule names a namespace
    for (const rule of rules.filter((r) => !external.includes(r))) {
      expect(rule.to.every((t: Obj) => t.namespaceSelector && !t.ipBlock)).toBe(true);
    }
  });

  it('operations.md documents operator-egress.yaml as the one place for the operator addresses', () => {
    const ops = read('docs/operations.md');
    expect(ops).toContain('deploy/kubernetes/operator-egress.yaml');
    expect(ops).toContain('deploy/kubernetes/networkpolicy-migrate.yaml');
  });

  it('every example database URL asks for verified TLS, and the pods can read the CA file DATABASE_CA_FILE names', () => {
    for (const s of secrets) {
      for (const [key, value] of Object.entries(s.stringData as Record<string, string>)) {
        if (key.endsWith('database-url')) expect(new URL(value).searchParams.get('sslmode'), key).toBe('verify-full');
      }
    }
    for (const [spec, c] of [
      [pod, container],
      [job.spec.template.spec as Obj, jobContainer],
    ] as const) {
      const file = envValue(c, 'DATABASE_CA_FILE')?.value as string;
      const mount = (c.volumeMounts as Obj[]).find((m) => file.startsWith(`${m.mountPath}/`)) as Obj;
      expect(mount, `a volume mounted over ${file}`).toBeDefined();
      const volume = (spec.volumes as Obj[]).find((v) => v.name === mount.name) as Obj;
      expect(volume.configMap).toEqual({ name: 'intake-sync-database-ca', optional: true });
    }
  });

  const kubectl = findExecutable('kubectl');
  it.skipIf(!kubectl)(
    'kubectl kustomize: refuses to render without the env files, and renders hashed Secrets referenced by name with them',
    () => {
      expect(existsSync(new URL(`${K8S}secrets/runtime.env`, root)), 'a filled-in runtime.env in the repository').toBe(false);
      const dir = mkdtempSync(join(tmpdir(), 'k8s-kit-'));
      try {
        cpSync(new URL(K8S, root).pathname, dir, { recursive: true });
        expect(() => execFileSync(kubectl as string, ['kustomize', dir], { stdio: 'pipe' })).toThrow(/runtime\.env/);
        for (const name of ['runtime', 'owner']) cpSync(join(dir, `secrets/${name}.env.example`), join(dir, `secrets/${name}.env`));
        const rendered = parseAllDocuments(execFileSync(kubectl as string, ['kustomize', dir], { encoding: 'utf8' })).map(
          (d) => d.toJS() as Obj,
        );
        const names = rendered.filter((m) => m.kind === 'Secret').map((m) => m.metadata.name as string);
        expect(names).toEqual(
          expect.arrayContaining([
            expect.stringMatching(/^intake-sync-[a-z0-9]{10}$/),
            expect.stringMatching(/^intake-sync-owner-[a-z0-9]{10}$/),
          ]),
        );
        const renderedJob = rendered.find((m) => m.kind === 'Job') as Obj;
        const renderedDeployment = rendered.find((m) => m.kind === 'Deployment') as Obj;
        expect(secretRefs(renderedJob.spec.template.spec.containers[0]).map((r) => r.name)).toEqual([
          names.find((n) => n.startsWith('intake-sync-owner-')),
        ]);
        expect(JSON.stringify(renderedDeployment)).not.toContain('intake-sync-owner');
        expect(rendered.filter((m) => m.kind === 'NetworkPolicy').map((m) => m.metadata.name as string)).toEqual(
          expect.arrayContaining(['intake-sync', 'intake-sync-migrate', 'intake-sync-operator-egress']),
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
