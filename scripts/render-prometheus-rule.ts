// Writes deploy/kubernetes/monitoring/prometheusrule.yaml from deploy/prometheus/alerts.yaml, so the
// Kubernetes PrometheusRule carries exactly the rules promtool tests (test/deploy/kubernetes.test.ts
// fails when they differ). Run: node --import tsx scripts/render-prometheus-rule.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';

const source = new URL('../deploy/prometheus/alerts.yaml', import.meta.url);
const target = new URL('../deploy/kubernetes/monitoring/prometheusrule.yaml', import.meta.url);
const rules = parse(readFileSync(source, 'utf8')) as { groups: unknown[] };
const resource = {
  apiVersion: 'monitoring.coreos.com/v1',
  kind: 'PrometheusRule',
  metadata: { name: 'intake-sync', namespace: 'intake-sync', labels: { 'app.kubernetes.io/name': 'intake-sync' } },
  spec: { groups: rules.groups },
};
const header = '# Generated from deploy/prometheus/alerts.yaml by scripts/render-prometheus-rule.ts: edit that file, then rerun.\n';
writeFileSync(target, header + stringify(resource, { lineWidth: 0 }));
console.log(`wrote ${target.pathname}`);
