import type { OutputCapture } from './capture.js';

export interface HealthAnswer {
  status: number;
  body: string;
}

/**
 * GET one of the worker's health paths. Every body is added to the capture so
 * the canary and secret scan covers health output and metrics too.
 */
export async function getHealth(
  port: number,
  path: '/healthz' | '/readyz' | '/metrics',
  capture: OutputCapture,
  label: string,
  // generous: on a loaded machine a worker busy with a page answers a scrape late, and a step that reads
  // it once (not a probe retried by waitFor) must not fail on the machine's load
  timeoutMs = 10_000,
): Promise<HealthAnswer> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(timeoutMs) });
  const body = await response.text();
  capture.add(`${label}:${path}`, path === '/metrics' ? 'metrics' : 'health', `${body}\n`);
  return { status: response.status, body };
}

/**
 * Value of a Prometheus sample `name` (optionally with labels containing
 * `labelFilter`), summed over matching lines; undefined when absent.
 */
export function metricValue(metrics: string, name: string, labelFilter?: string): number | undefined {
  let total: number | undefined;
  for (const line of metrics.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!match || match[1] !== name) continue;
    if (labelFilter && !(match[2] ?? '').includes(labelFilter)) continue;
    total = (total ?? 0) + Number(match[3]);
  }
  return total;
}
