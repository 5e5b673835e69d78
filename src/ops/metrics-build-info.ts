import { Gauge, type Registry } from 'prom-client';
import { VERSION } from '../version.js';

/**
 * intake_sync_build_info{version}: always 1, the version in a label (the Prometheus convention), so a
 * dashboard can show which build each replica runs and an alert can join on it during a rollout.
 */
export function registerBuildInfo(registry: Registry): void {
  const info = new Gauge({
    name: 'intake_sync_build_info',
    help: 'Always 1; the running build in the version label',
    labelNames: ['version'],
    registers: [registry],
  });
  info.set({ version: VERSION }, 1);
}
