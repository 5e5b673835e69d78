import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../../src/intake/errors/upstream-error.js';
import { OutcomePolicy } from '../../../src/sync/poll/outcome-policy.js';
import { WorkerState } from '../../../src/sync/state/worker-state.js';

const silent = pino({ level: 'silent' });

function policy() {
  const state = new WorkerState({ now: () => 0 });
  return new OutcomePolicy(
    { state, log: silent, feed: 'east' },
    { known: undefined, lastVersion: undefined, heldAtVersion: undefined, lastFetchStartedAt: 0 },
  );
}

describe('OutcomePolicy: a failed pass waits, and carries what the operator asked', () => {
  it('a 429 the client stopped retrying passes its Retry-After on to the wait', () => {
    const error = new UpstreamError({ method: 'GET', path: '/events' }, 429, 1_000);
    expect(policy().next({ kind: 'failure', source: 'upstream', error }, false)).toEqual({
      kind: 'wait',
      reason: { kind: 'failure', consecutiveFailures: 1, retryAfterMs: 1_000 },
    });
  });

  it('any other failure waits the backoff alone', () => {
    const step = policy().next({ kind: 'failure', source: 'database', error: new Error('connection refused') }, false);
    expect(step).toEqual({ kind: 'wait', reason: { kind: 'failure', consecutiveFailures: 1, retryAfterMs: undefined } });
  });
});
