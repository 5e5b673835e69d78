import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/sandbox/clock.js';
import { samplePrescription } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { call } from '../support/sandbox/client.js';

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

async function requestsReport(sb: Sandbox, prefix: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${sb.origin}/_sandbox/prescription-requests?prefix=${prefix}`);
  return ((await res.json()) as { external_ids: Record<string, unknown> }).external_ids;
}

describe('dropAfterProcessingRate and the per-external_id request ledger', () => {
  it('POST: the prescription is created, then the connection drops; a repeat is refused as a duplicate', async () => {
    sandbox = await startSandbox({ clock: new ManualClock(), faults: { dropAfterProcessingRate: 1 } });
    const prescription = samplePrescription(1, { prefix: 'dap' });
    await expect(call(sandbox, 'POST', '/prescriptions', { body: { prescription } })).rejects.toThrow(/fetch failed/);
    sandbox.setFaults({ dropAfterProcessingRate: 0 });
    expect((await call(sandbox, 'GET', '/prescriptions/dap-1')).status).toBe(200);
    expect((await call(sandbox, 'POST', '/prescriptions', { body: { prescription } })).status).toBe(422);
    expect(await requestsReport(sandbox, 'dap-')).toEqual({ 'dap-1': { created: 1, duplicates_refused: 1, cancellations: 0 } });
  });

  it('DELETE: the cancellation is applied, then the connection drops; GET is never dropped', async () => {
    sandbox = await startSandbox({ clock: new ManualClock() });
    expect(
      (await call(sandbox, 'POST', '/prescriptions', { body: { prescription: samplePrescription(2, { prefix: 'dap' }) } })).status,
    ).toBe(201);
    sandbox.setFaults({ dropAfterProcessingRate: 1 });
    await expect(call(sandbox, 'DELETE', '/prescriptions/dap-2')).rejects.toThrow(/fetch failed/);
    const found = await call(sandbox, 'GET', '/prescriptions/dap-2');
    expect(found.status).toBe(200);
    expect(found.body.prescription.cancellation_requested_at).not.toBeNull();
    expect(await requestsReport(sandbox, 'dap-2')).toEqual({ 'dap-2': { created: 1, duplicates_refused: 0, cancellations: 1 } });
  });

  it('off by default: requests are answered and counted', async () => {
    sandbox = await startSandbox({ clock: new ManualClock() });
    expect(sandbox.faults().dropAfterProcessingRate).toBe(0);
    expect((await call(sandbox, 'DELETE', '/prescriptions/none')).status).toBe(404);
    expect(await requestsReport(sandbox, '')).toEqual({});
  });
});
