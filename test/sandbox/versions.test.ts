import { afterEach, describe, expect, it } from 'vitest';
import { parseVersionsOption } from '../../src/cli/commands/sandbox/sandbox.js';
import { ManualClock } from '../../src/sandbox/clock.js';
import { identityOf, samplePrescription } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import type { VersionListing } from '../../src/sandbox/versions.js';
import { admin, call, MINUTE, readFeed } from '../support/sandbox/client.js';

const V1 = '2024-12-10';
const V2 = '2025-06-01';

describe('sandbox --versions', () => {
  it('defaults to 2024-12-10 alone and keeps the order given', () => {
    expect(parseVersionsOption(undefined)).toEqual([V1]);
    expect(parseVersionsOption(`${V1}, ${V2}`)).toEqual([V1, V2]);
  });

  it.each([
    ['2025-6-01', /--versions: invalid API version "2025-6-01": a version is a date written YYYY-MM-DD/],
    ['2025-02-30', /"2025-02-30": not a calendar date/],
    [`${V1},${V1}`, /"2024-12-10": given twice/],
    [`${V1},`, /invalid API version "": a version is a date/],
  ])('refuses %j naming the version', (raw, message) => {
    expect(() => parseVersionsOption(raw)).toThrow(message);
    expect(() => parseVersionsOption(raw)).toThrow(expect.objectContaining({ name: 'CliUsageError' }));
  });
});

describe.each<VersionListing>(['separate', 'shared'])('sandbox serving two versions, %s listing', (listing) => {
  let sandbox: Sandbox;
  let clock: ManualClock;
  afterEach(() => sandbox.close());

  async function start(): Promise<void> {
    clock = new ManualClock(Date.UTC(2025, 0, 1));
    sandbox = await startSandbox({ clock, versions: [V1, V2], versionListing: listing });
  }

  it('serves each version under its own base path; an unknown version is 404', async () => {
    await start();
    expect(sandbox.baseUrl).toBe(sandbox.baseUrlFor(V1));
    expect(sandbox.baseUrlFor(V2)).toMatch(/\/intake_api\/2025-06-01$/);
    expect((await call(sandbox, 'GET', '/events', { version: V2 })).status).toBe(200);
    expect((await call(sandbox, 'GET', '/events', { version: '2026-01-01' })).status).toBe(404);
    expect(sandbox.store.stats().api_requests).toEqual({ [V2]: { events: 1 } });
  });

  it('a subscription carries the version it was created through, and so do its events', async () => {
    await start();
    // sent through V1: its automatic subscription is at V1; a second subscription made through V2
    const sent = await call(sandbox, 'POST', '/prescriptions', { body: { prescription: samplePrescription(1) } });
    expect(sent.status).toBe(201);
    const created = await call(sandbox, 'POST', '/subscriptions', {
      version: V2,
      body: { subscription: { prescription_identity: identityOf(samplePrescription(1)), backfill_previous_events: false } },
    });
    expect(created.status).toBe(201);
    expect(created.body.subscription.api_version).toBe(V2);
    // a prescription sent through V2 gets its automatic subscription at V2
    expect((await call(sandbox, 'POST', '/prescriptions', { version: V2, body: { prescription: samplePrescription(2) } })).status).toBe(
      201,
    );
    clock.advance(5 * MINUTE);

    const underV1 = await readFeed(sandbox, 250, V1);
    const underV2 = await readFeed(sandbox, 250, V2);
    if (listing === 'shared') {
      // one feed: the same events, ids and order under both paths
      expect(underV2).toEqual(underV1);
      expect(underV1).toHaveLength(3);
      expect(new Set(underV1.map((e) => e.api_version))).toEqual(new Set([V1, V2]));
    } else {
      expect(underV1.map((e) => e.api_version)).toEqual([V1]);
      expect(underV2.map((e) => e.api_version)).toEqual([V2, V2]);
      // ids never collide across the versions' feeds, and one version cannot fetch another's event
      const ids = [...underV1, ...underV2].map((e) => e.id);
      expect(new Set(ids).size).toBe(3);
      expect((await call(sandbox, 'GET', `/events/${underV2[0].id}`, { version: V1 })).status).toBe(404);
      expect((await call(sandbox, 'GET', `/events/${underV2[0].id}`, { version: V2 })).status).toBe(200);
    }
  });

  it('injects raw events into the listing of a served version only', async () => {
    await start();
    const raw = { id: 'evt_future_1', api_version: '2026-01-01' };
    expect((await admin(sandbox, 'inject', { api_version: V2, events: [raw] })).status).toBe(200);
    expect((await readFeed(sandbox, 250, V2)).map((e) => e.id)).toEqual(['evt_future_1']);
    expect((await readFeed(sandbox, 250, V1)).map((e) => e.id)).toEqual(listing === 'shared' ? ['evt_future_1'] : []);
    const refused = await admin(sandbox, 'inject', { api_version: '2026-01-01', events: [raw] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/"2026-01-01": not served/);
  });
});

it('startSandbox refuses a malformed version by name', async () => {
  await expect(startSandbox({ versions: ['2025/06/01'] })).rejects.toThrow(expect.objectContaining({ name: 'InvalidVersionError' }));
});
