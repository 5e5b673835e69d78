import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { envSchema, loadConfig } from '../../src/config/config.js';
import { envList, exampleSecrets, resolvedEnv } from '../support/deploy/container-env.js';

const root = new URL('../../', import.meta.url);
const K8S = 'deploy/kubernetes/';
type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const all: Obj[] = readdirSync(new URL(K8S, root))
  .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
  .flatMap((f) => parseAllDocuments(readFileSync(new URL(K8S + f, root), 'utf8')).map((d) => d.toJS() as Obj));
const PROXY_LABEL = 'intake-sync.io/console-proxy';
const byName = (kind: string, name: string) => all.find((m) => m.kind === kind && m.metadata.name === name) as Obj;
const deployment = byName('Deployment', 'intake-sync-console');
const pod = deployment.spec.template.spec as Obj;
const container = pod.containers[0] as Obj;
const podLabels = deployment.spec.template.metadata.labels as Record<string, string>;
const policies = all.filter((m) => m.kind === 'NetworkPolicy');
const selects = (p: Obj, labels: Record<string, string>) =>
  Object.entries(p.spec.podSelector.matchLabels as Record<string, string>).every(([k, v]) => labels[k] === v);

describe('deploy/kubernetes: the console', () => {
  it('is in the kustomization', () => {
    const kustomization = readFileSync(new URL(`${K8S}kustomization.yaml`, root), 'utf8');
    for (const f of ['console-deployment.yaml', 'console-service.yaml', 'console-networkpolicy.yaml'])
      expect(kustomization).toContain(`- ${f}`);
  });

  it('runs `console` non-root, read-only, with resources and /healthz probes on its port', () => {
    expect(container.args).toEqual(['console']);
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(container.resources.requests.memory).toBeDefined();
    expect(container.resources.limits.memory).toBeDefined();
    expect(container.resources.limits.cpu).toBeDefined();
    for (const probe of [container.readinessProbe, container.livenessProbe])
      expect(probe.httpGet).toEqual({ path: '/healthz', port: 'console' });
    const env = Object.fromEntries(envList(container).map((e: Obj) => [e.name, e.value]));
    expect(Number(env.CONSOLE_PORT)).toBe(container.ports[0].containerPort);
    // every variable is one the config knows, and the environment parses
    const known = new Set(Object.keys((envSchema as unknown as { shape: Record<string, unknown> }).shape));
    for (const e of envList(container)) expect(known.has(e.name), e.name).toBe(true);
    const config = loadConfig(resolvedEnv(container, exampleSecrets(new URL(K8S, root))));
    expect(config.DATABASE_URL).toMatch(/^postgres:\/\/postgres\.database\.svc:5432\//);
    expect(config.CONSOLE_HOST).toBe('0.0.0.0');
  });

  it('the Service selects the console pod only, on its port', () => {
    const service = byName('Service', 'intake-sync-console');
    expect(service.spec.selector).toEqual(podLabels);
    expect(service.spec.ports[0].targetPort).toBe('console');
    const worker = byName('Deployment', 'intake-sync');
    expect(Object.entries(service.spec.selector).every(([k, v]) => worker.spec.template.metadata.labels[k] === v)).toBe(false);
  });

  it('exactly one policy selects the console pod, and it selects no other pod of the kit', () => {
    expect(policies.filter((p) => selects(p, podLabels)).map((p) => p.metadata.name)).toEqual(['intake-sync-console']);
    const console = byName('NetworkPolicy', 'intake-sync-console');
    for (const other of all.filter((m) => ['Deployment', 'Job'].includes(m.kind) && m !== deployment)) {
      expect(selects(console, other.spec.template.metadata.labels), other.metadata.name).toBe(false);
    }
  });

  it("ingress: only pods of the console's own namespace carrying the proxy label, only on the console port", () => {
    const p = byName('NetworkPolicy', 'intake-sync-console');
    expect(p.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    // a podSelector alone selects in the policy's namespace; a namespaceSelector (even {}) or an ipBlock would widen it
    expect(p.spec.ingress).toEqual([
      {
        from: [{ podSelector: { matchLabels: { [PROXY_LABEL]: 'true' } } }],
        ports: [{ port: 'console', protocol: 'TCP' }],
      },
    ]);
    expect(p.metadata.namespace).toBe(deployment.metadata.namespace);
    expect(JSON.stringify(p.spec.ingress)).not.toMatch(/namespaceSelector|ipBlock/);
    // the label is defined in one place: the policy file's comment, and docs point there
    const files = readdirSync(new URL(K8S, root)).filter((f) => f.endsWith('.yaml'));
    const defining = files.filter((f) => readFileSync(new URL(K8S + f, root), 'utf8').includes(PROXY_LABEL));
    expect(defining).toEqual(['console-networkpolicy.yaml']);
  });

  it('egress: DNS and the database namespace only, never an IP block', () => {
    const p = byName('NetworkPolicy', 'intake-sync-console');
    expect(p.spec.egress).toHaveLength(2);
    const [dns, db] = p.spec.egress as [Obj, Obj];
    expect(dns.to).toEqual([
      {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
        podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
      },
    ]);
    expect(dns.ports).toEqual([
      { port: 53, protocol: 'UDP' },
      { port: 53, protocol: 'TCP' },
    ]);
    expect(db.to).toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'database' } } }]);
    expect(db.ports.map((x: Obj) => x.port)).toEqual([5432, 6432]);
    expect(JSON.stringify(p.spec.egress)).not.toContain('ipBlock');
  });
});
