import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePort } from '../faults/free-port.js';
import { waitFor } from '../wait-for.js';

export interface PrometheusServer {
  url: string;
  /** GET /api/v1/<path>; throws with Prometheus' error on a non-success answer */
  api<T>(path: string, params?: Record<string, string>): Promise<T>;
  /** the raw answer of a query, success or not (for "does it parse") */
  query(expr: string): Promise<{ status: string; error?: string; data?: { resultType: string; result: unknown[] } }>;
  log(): string;
  stop(): Promise<void>;
}

/**
 * A real Prometheus (the Debian package's binary) on a free port, scraping `targets` as job
 * intake-sync every 2 s and evaluating `ruleFile` every second: short intervals so alerts
 * change state in seconds; the rules' own `for:` only decides when pending turns firing.
 */
export async function startPrometheus(binary: string, options: { targets: string[]; ruleFile: string }): Promise<PrometheusServer> {
  const dir = mkdtempSync(join(tmpdir(), 'intake-sync-prometheus-'));
  const port = await freePort();
  writeFileSync(
    join(dir, 'prometheus.yml'),
    stringify({
      // scrapes every 2 s with a generous timeout: a busy 2-core machine must not read as a target down
      global: { scrape_interval: '2s', scrape_timeout: '1900ms', evaluation_interval: '1s' },
      rule_files: [options.ruleFile],
      scrape_configs: [{ job_name: 'intake-sync', static_configs: [{ targets: options.targets }] }],
    }),
  );
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  };
  const query = async (expr: string) => {
    const response = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: expr })}`);
    return (await response.json()) as { status: string; error?: string; data?: { resultType: string; result: unknown[] } };
  };
  const api = async <T>(path: string, params: Record<string, string> = {}): Promise<T> => {
    const response = await fetch(`${url}/api/v1/${path}?${new URLSearchParams(params)}`);
    const body = (await response.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error ?? response.status}`);
    return body.data;
  };
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`prometheus exited at start:\n${output}`);
        return (await fetch(`${url}/-/ready`).catch(() => undefined))?.ok === true;
      },
      { timeoutMs: 60_000, what: 'prometheus to be ready', intervalMs: 100 },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, api, query, log: () => output, stop };
}
