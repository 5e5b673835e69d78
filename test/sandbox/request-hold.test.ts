import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/sandbox/clock.js';
import { identityOf, samplePrescription } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { call } from '../support/sandbox/client.js';

// The hold control stops a request at a known point so tests kill clients without sleeping; what
// happens once it lets go decides whether the operator applied the request.

describe('sandbox request holds', () => {
  let sandbox: Sandbox;
  afterEach(() => sandbox.close());

  const subscribe = () =>
    call(sandbox, 'POST', '/subscriptions', {
      body: { subscription: { prescription_identity: identityOf(samplePrescription(1)), backfill_previous_events: false } },
    });
  const subscriptions = () => [
    ...sandbox.store.authenticate(sandbox.credentials[0]!.key, sandbox.credentials[0]!.secret)!.subscriptions.values(),
  ];

  it('before, released: the operator applies it then', async () => {
    sandbox = await startSandbox({ clock: new ManualClock() });
    const held = sandbox.hold({ method: 'POST', resource: 'subscriptions', nth: 1, phase: 'before' });
    const answer = subscribe();
    await held.reached;
    expect(subscriptions()).toHaveLength(0);
    held.release();
    expect((await answer).status).toBe(201);
    expect(subscriptions()).toHaveLength(1);
  });

  it('before, dropped: never applied, the socket closes', async () => {
    sandbox = await startSandbox({ clock: new ManualClock() });
    const held = sandbox.hold({ method: 'POST', resource: 'subscriptions', nth: 1, phase: 'before' });
    const answer = subscribe();
    await held.reached;
    held.drop();
    await expect(answer).rejects.toThrow();
    expect(subscriptions()).toHaveLength(0);
    // the next one goes through as usual
    expect((await subscribe()).status).toBe(201);
  });

  it('after: applied at once, the answer waits for the release', async () => {
    sandbox = await startSandbox({ clock: new ManualClock() });
    const held = sandbox.hold({ method: 'POST', resource: 'subscriptions', nth: 2, phase: 'after' });
    expect((await subscribe()).status).toBe(201);
    const answer = subscribe();
    await held.reached;
    expect(subscriptions()).toHaveLength(2);
    held.release();
    expect((await answer).status).toBe(201);
  });
});
