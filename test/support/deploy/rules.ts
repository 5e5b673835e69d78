import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface RuleGroups {
  groups: Array<{ name: string; rules: AlertRule[] }>;
}

export const ALERTS_FILE = new URL('../../../deploy/prometheus/alerts.yaml', import.meta.url);
export const ALERTS_TEST_FILE = new URL('../../../deploy/prometheus/alerts.test.yaml', import.meta.url);

/** deploy/prometheus/alerts.yaml, parsed. */
export function loadAlertRules(): RuleGroups {
  return parse(readFileSync(ALERTS_FILE, 'utf8')) as RuleGroups;
}

/** Every alerting rule of every group. */
export function allAlerts(rules: RuleGroups = loadAlertRules()): AlertRule[] {
  return rules.groups.flatMap((group) => group.rules);
}
