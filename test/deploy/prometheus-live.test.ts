import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/sandbox/clock.js';
import { sampleIdentity } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { registerLocalPrescriptions } from '../../src/sync/matching/local-prescriptions.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import { waitFor } from '../support/wait-for.js';
import { spawnCli, type WorkerProcess } from '../support/process/worker-process.js';
import { startPrometheus, type PrometheusServer } from '../support/deploy/prometheus-server.js';
import { metricNames } from '../support/deploy/promql.js';
import { ALERTS_FILE, allAlerts } from '../support/deploy/rules.js';
import { findExecutable, skipReason } from '../support/deploy/tools.js';

const prometheusBinary = findExecutable('prometheus');
const hasPostgres = await postgresReachable();
const skip = !prometheusBinary || !hasPostgres;
const reason = !prometheusBinary
  ? skipReason('prometheus', 'apt-get install prometheus; .ci/run installs it')
  : !hasPostgres
    ? NEEDS_POSTGRES
    : '';

interface Dashboard {
  panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
  templating: { list: Array<{ name: string; query?: unknown }> };
}
const dashboard = JSON.parse(readFileSync(new URL('../../deploy/grafana/intake-sync.json', import.meta.url), 'utf8')) as Dashboard;

/** A dashboard query as Grafana would send it: variables and its interval macros substituted. */
function grafanaToPromql(expr: string): string {
  return expr.replaceAll('$__rate_interval', '30s').replaceAll('$__interval', '15s').replaceAll('$__range', '1h').replaceAll('$feed', '.*');
}
const dashboardQueries = dashboard.panels.flatMap((panel) =>
  (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: grafanaToPromql(target.expr) })),
);

/** Names of the metric families and samples in a /metrics body. */
function exposedNames(body: string): Set<string> {
  const names = new Set<string>();
  for (const line of body.split('\n')) {
    const match = /^(?:# TYPE )?([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line);
    if (match?.[1] && !line.startsWith('# HELP')) names.add(match[1]);
  }
  return names;
}

/**
 * Issue 10 §6: a real Prometheus scrapes a daemon draining a backlog from the simulator; every
 * alert expression and every dashboard query parses there and uses only names the daemon
 * exposes; then the upstream stops and the stall alert goes pending.
 */
describe.skipIf(skip)(`the alerts and the dashboard against a real Prometheus${reason ? ` (${reason})` : ''}`, () => {
  let test: TestDatabase;
  let sandbox: Sandbox;
  let daemon: WorkerProcess;
  let prometheus: PrometheusServer;
  let healthPort = 0;

  beforeAll(async () => {
    test = await createTestDatabase('prometheus_live');
    // a slow backlog: one event a page, 40 ms per answer, so the daemon is still draining when the upstream stops
    sandbox = await startSandbox({ clock: new ManualClock(), faults: { latencyMs: 40 } });
    sandbox.store.seedBulk({ count: 400, rejectEvery: 7, prefix: 'prom' });
    // healthy means matched: unmatched events would grow the quarantine and rightly wake QuarantineGrowing
    await registerLocalPrescriptions(
      test.database.db,
      Array.from({ length: 400 }, (_, i) => ({ external_id: `prom-${i}`, prescription_identity: sampleIdentity(i) })),
    );
    const [credential] = sandbox.credentials;
    daemon = spawnCli(['run'], {
      DATABASE_URL: test.url as string,
      INTAKE_API_BASE_URL: sandbox.baseUrl,
      INTAKE_API_KEY: credential?.key ?? '',
      INTAKE_API_SECRET: credential?.secret ?? '',
      PAGE_LIMIT: '1',
      POLL_INTERVAL_MS: '200',
      // above the scrape interval (2 s) with room: the stall rule compares time() with the last SCRAPED
      // success, up to 2 s old between scrapes; at 1 s it stayed true on a healthy feed whenever the rule
      // evaluations fell late in the scrape cycle (the offsets depend on the target's port)
      READY_MAX_POLL_AGE_MS: '4000',
      HEALTH_HOST: '127.0.0.1',
      HEALTH_PORT: '0',
      SHUTDOWN_GRACE_MS: '3000',
    });
    await waitFor(
      () => {
        healthPort = Number(daemon.logs().find((l) => l.component === 'health' && typeof l.port === 'number')?.port ?? 0);
        if (daemon.child.exitCode !== null) throw new Error(`the daemon exited: ${JSON.stringify(daemon.logs().slice(-5))}`);
        return healthPort > 0;
      },
      { timeoutMs: 60_000, what: 'the daemon health endpoint' },
    );
    prometheus = await startPrometheus(prometheusBinary as string, {
      targets: [`127.0.0.1:${healthPort}`],
      ruleFile: fileURLToPath(ALERTS_FILE),
    });
  }, 120_000);

  afterAll(async () => {
    await prometheus?.stop();
    if (daemon && daemon.child.exitCode === null && daemon.child.signalCode === null) {
      daemon.child.kill('SIGTERM');
      const killer = setTimeout(() => daemon.child.kill('SIGKILL'), 10_000);
      await daemon.exited;
      clearTimeout(killer);
    }
    await sandbox?.close().catch(() => {});
    await test?.drop();
  }, 60_000);

  it('scrapes the daemon while it drains a backlog, and loads every rule without error', async () => {
    await waitFor(async () => ((await prometheus.query('intake_sync_backlog == 1')).data?.result.length ?? 0) > 0, {
      timeoutMs: 60_000,
      what: 'Prometheus to see the leader draining a backlog',
    });
    const rules = await prometheus.api<{ groups: Array<{ rules: Array<{ name: string; health: string; lastError?: string }> }> }>('rules');
    const loaded = rules.groups.flatMap((g) => g.rules);
    expect(loaded.map((r) => r.name).sort()).toEqual(
      allAlerts()
        .map((a) => a.alert)
        .sort(),
    );
    // evaluated at least once, without error
    await waitFor(
      async () => (await prometheus.api<typeof rules>('rules')).groups.flatMap((g) => g.rules).every((r) => r.health === 'ok'),
      { timeoutMs: 30_000, what: `every rule healthy: ${JSON.stringify(loaded.filter((r) => r.health !== 'ok'))}` },
    );
  });

  it('every alert expression and every dashboard query parses and evaluates, using only names /metrics exposes', async () => {
    const metrics = await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text();
    const exposed = exposedNames(metrics);
    const expressions = [
      ...allAlerts().map((a) => ({ what: `alert ${a.alert}`, expr: a.expr })),
      ...dashboardQueries.map((q) => ({ what: `panel "${q.panel}"`, expr: q.expr })),
    ];
    expect(dashboardQueries.length).toBeGreaterThan(15);
    for (const { what, expr } of expressions) {
      const answer = await prometheus.query(expr);
      expect(answer.status, `${what}: ${answer.error ?? ''}\n${expr}`).toBe('success');
      for (const name of metricNames(expr)) {
        if (name === 'up') continue; // Prometheus' own, per target
        expect(exposed.has(name), `${what} uses ${name}, which the daemon's /metrics does not expose`).toBe(true);
      }
    }
    // the dashboard's feed variable reads a label the daemon sets
    const feeds = await prometheus.api<string[]>('label/feed/values');
    expect(feeds).toContain('default');
    // the series the rules select are really there (not just parseable)
    for (const name of [
      'intake_sync_leader',
      'intake_sync_backlog',
      'intake_sync_last_success_timestamp_seconds',
      'intake_sync_ready_max_poll_age_seconds',
      'up',
    ]) {
      expect((await prometheus.query(name)).data?.result.length, name).toBeGreaterThan(0);
    }
    // healthy so far: once the rules were evaluated on scraped data (the first evaluation can come
    // before the first scrape, when IntakeSyncAllDown rightly goes pending), nothing is pending or firing
    let active: string[] = [];
    await waitFor(
      async () => {
        const { alerts } = await prometheus.api<{ alerts: Array<{ labels: Record<string, string>; state: string }> }>('alerts');
        active = alerts.map((a) => `${a.labels.alertname} ${a.state}`);
        return active.length === 0;
      },
      { timeoutMs: 45_000, what: 'no alert on a healthy draining feed', intervalMs: 250 },
    ).catch((error: unknown) => {
      // the message is built when the wait gives up, so it names the alerts still active then
      throw new Error(`${error instanceof Error ? error.message : String(error)}; still active: ${active.join(', ')}`);
    });
    // the waits above have deadlines of their own, which must be what fails: they name the cause
  }, 90_000);

  it('the upstream stops mid-backlog: the stall alert goes pending', async () => {
    const before = await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text();
    expect(before, 'the daemon should still be draining (seed a longer backlog)').toMatch(/^intake_sync_backlog\{feed="default"\} 1$/m);
    const stoppedAt = Date.now();
    await sandbox.close();
    let pending: { labels: Record<string, string>; state: string } | undefined;
    await waitFor(
      async () => {
        const { alerts } = await prometheus.api<{ alerts: Array<{ labels: Record<string, string>; state: string }> }>('alerts');
        pending = alerts.find((a) => a.labels.alertname === 'IntakeSyncFeedStalled');
        return pending !== undefined;
      },
      { timeoutMs: 60_000, what: 'IntakeSyncFeedStalled to go pending', intervalMs: 250 },
    );
    console.log(
      `IntakeSyncFeedStalled ${pending?.state} ${Date.now() - stoppedAt} ms after the upstream stopped (READY_MAX_POLL_AGE_MS 4000, scrape every 2 s, evaluation every 1 s)`,
    );
    expect(pending).toMatchObject({
      state: 'pending',
      labels: { alertname: 'IntakeSyncFeedStalled', feed: 'default', severity: 'page', job: 'intake-sync' },
    });
    // the quiet-feed variant stays out: a backlog is there
    const { alerts } = await prometheus.api<{ alerts: Array<{ labels: Record<string, string> }> }>('alerts');
    expect(alerts.map((a) => a.labels.alertname)).not.toContain('IntakeSyncPollHeartbeatStale');
  });
});
