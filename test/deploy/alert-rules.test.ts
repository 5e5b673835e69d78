import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createReloadMetrics } from '../../src/daemon/feeds-reload/reload-metrics.js';
import { registerPauseMetric } from '../../src/daemon/pause-metrics.js';
import { createSyncMetrics } from '../../src/ops/metrics.js';
import { FeedPauseBoard } from '../../src/sync/leadership/feed-pauses.js';
import { WorkerState } from '../../src/sync/state/worker-state.js';
import { exposedNames, headingAnchor, metricNames } from '../support/deploy/promql.js';
import { ALERTS_FILE, ALERTS_TEST_FILE, allAlerts } from '../support/deploy/rules.js';
import { findExecutable, skipReason } from '../support/deploy/tools.js';

const promtool = findExecutable('promtool');
const runbook = readFileSync(new URL('../../docs/runbook.md', import.meta.url), 'utf8');
const alerts = allAlerts();

interface PromtoolTests {
  tests: Array<{ name: string; alert_rule_test?: Array<{ eval_time: string; alertname: string; exp_alerts: unknown[] }> }>;
}
const unitTests = parse(readFileSync(ALERTS_TEST_FILE, 'utf8')) as PromtoolTests;

/** runbook sections: anchor -> body up to the next heading of the same level */
function runbookSections(): Map<string, string> {
  const sections = new Map<string, string>();
  const parts = runbook.split(/^## /m).slice(1);
  for (const part of parts) {
    const [heading = '', ...body] = part.split('\n');
    sections.set(headingAnchor(heading), body.join('\n'));
  }
  return sections;
}

describe('deploy/prometheus/alerts.yaml', () => {
  it('covers what issue 10 asks for', () => {
    expect(alerts.map((a) => a.alert).sort()).toEqual(
      [
        'IntakeSyncAllDown',
        'IntakeSyncCredentialsRejected',
        'IntakeSyncCursorExpired',
        'IntakeSyncEventTooLarge',
        'IntakeSyncFeedStalled',
        'IntakeSyncInstanceDown',
        'IntakeSyncLagGrowing',
        'IntakeSyncLeaseFlapping',
        'IntakeSyncMigrationUnfinished',
        'IntakeSyncMultipleLeaders',
        'IntakeSyncNoLeader',
        'IntakeSyncNoProgress',
        'IntakeSyncOutboxStale',
        'IntakeSyncPollHeartbeatStale',
        'IntakeSyncQuarantineGrowing',
        'IntakeSyncUpstreamErrors',
        // issue 18: the retention cleaner
        'IntakeSyncRetentionNotRunning',
        // issue 28: stalled prescriptions
        'IntakeSyncPrescriptionsOverdue',
        // issue 36: a paused feed, a refused FEEDS_FILE
        'IntakeSyncFeedPaused',
        'IntakeSyncFeedsReloadFailed',
      ].sort(),
    );
  });

  it('links every alert to a runbook section that has commands to run', () => {
    const sections = runbookSections();
    for (const alert of alerts) {
      const url = alert.annotations?.runbook_url ?? '';
      const match = /^docs\/runbook\.md#([a-z0-9-]+)$/.exec(url);
      expect(match, `${alert.alert}: runbook_url ${url}`).not.toBeNull();
      const section = sections.get(match?.[1] ?? '');
      expect(section, `${alert.alert}: no runbook heading for #${match?.[1]}`).toBeDefined();
      expect(section, `${alert.alert}: its runbook section has no command block`).toMatch(
        /```sh\n.*intake-sync|```sh\n[\s\S]*?(kubectl|curl|psql|intake-sync)/,
      );
      expect(alert.labels?.severity, `${alert.alert}: severity`).toMatch(/^(page|ticket)$/);
    }
  });

  it('uses only metric names the daemon exposes (and up)', async () => {
    const metrics = createSyncMetrics(
      new WorkerState({ now: () => 0 }),
      { now: () => 0 },
      { feed: 'default', pollIntervalMs: 5_000, readyMaxPollAgeMs: 60_000 },
    );
    // the daemon's process-wide series beside the feeds' (src/daemon/run.ts): the reloads and the pauses
    createReloadMetrics(0).register(metrics.registry);
    registerPauseMetric(
      metrics.registry,
      new FeedPauseBoard(
        async () => new Map(),
        1_000,
        () => 0,
      ),
      () => ['default'],
    );
    const exposed = exposedNames(await metrics.registry.getMetricsAsJSON());
    exposed.add('up');
    metrics.close();
    for (const alert of alerts) {
      const names = metricNames(alert.expr);
      expect(names.length, `${alert.alert} selects no metric`).toBeGreaterThan(0);
      for (const name of names) expect(exposed.has(name), `${alert.alert} uses ${name}, which /metrics does not expose`).toBe(true);
    }
  });

  it('has a unit test that fires every alert, and negative tests (healthy feeds) in which none fires', () => {
    const names = alerts.map((a) => a.alert);
    const fired = new Set(
      unitTests.tests.flatMap((t) => (t.alert_rule_test ?? []).filter((c) => c.exp_alerts.length > 0).map((c) => c.alertname)),
    );
    expect([...names].filter((n) => !fired.has(n))).toEqual([]);
    const healthy = unitTests.tests.filter((t) => t.name.startsWith('healthy'));
    expect(healthy.length).toBeGreaterThanOrEqual(2);
    for (const test of healthy) {
      const quiet = new Set((test.alert_rule_test ?? []).filter((c) => c.exp_alerts.length === 0).map((c) => c.alertname));
      expect(
        names.filter((n) => !quiet.has(n)),
        `${test.name} must expect silence from every alert`,
      ).toEqual([]);
      expect((test.alert_rule_test ?? []).every((c) => c.exp_alerts.length === 0)).toBe(true);
    }
  });

  describe.skipIf(!promtool)(promtool ? 'promtool' : skipReason('promtool', 'apt-get install prometheus'), () => {
    const run = (...args: string[]) => {
      try {
        return execFileSync(promtool as string, args, {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
          cwd: fileURLToPath(new URL('.', ALERTS_FILE)),
        });
      } catch (error) {
        const { stdout, stderr } = error as { stdout?: string; stderr?: string };
        throw new Error(`promtool ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`);
      }
    };

    it('promtool check rules', () => {
      expect(run('check', 'rules', 'alerts.yaml')).toMatch(/SUCCESS: \d+ rules found/);
    });

    it('promtool test rules', () => {
      expect(run('test', 'rules', 'alerts.test.yaml')).toMatch(/SUCCESS/);
    });
  });
});
