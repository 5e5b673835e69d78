import pino from 'pino';
import { expect, it } from 'vitest';
import { Poller, type AppliedPage, type FetchedPage, type PollerDeps } from '../../../src/sync/poll/poller.js';
import { WorkerState } from '../../../src/sync/state/worker-state.js';

// The poll loop's ordering with a transport that reports when a request is written (fetchReportsSent):
// a page waited for is applied only once the next page's request is on the wire.

const silent = pino({ level: 'silent' });
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Pages of 2 events up to `total`; the iterator is the next position. */
function pageAt(iterator: string | null, total: number): FetchedPage {
  const from = iterator === null ? 0 : Number(iterator);
  const to = Math.min(total, from + 2);
  return {
    events: Array.from({ length: to - from }, (_, i) => ({ id: `ev_${from + i}` })),
    meta: { iterator: String(to), done: to >= total },
  };
}

function poller(deps: Pick<PollerDeps, 'fetchPage'> & Partial<PollerDeps>, log: string[], afterApply?: (nextIterator: string) => void) {
  let version = 0;
  let now = 0;
  const clock = { now: () => (now += 1) };
  return new Poller({
    fetchReportsSent: true,
    applyPage: async (input): Promise<AppliedPage> => {
      log.push(`apply ${input.nextIterator}`);
      if (input.expectedVersion !== version) throw new Error('stale version');
      version += 1;
      afterApply?.(input.nextIterator);
      const n = input.events.length;
      const quarantined = { malformed: 0, unmatched: 0, ambiguous: 0, unsupported_version: 0 };
      return { version, received: n, inserted: n, duplicates: 0, statusChanges: n, matched: n, quarantined };
    },
    loadCheckpoint: async () => ({ iterator: null, version, updatedAt: new Date(0) }),
    clock,
    sleep: async () => {},
    nextDelay: () => 1,
    state: new WorkerState(clock),
    log: silent,
    ...deps,
  });
}

it('applies a page only after the next request reported it was written, however many turns that takes', async () => {
  const log: string[] = [];
  const p = poller(
    {
      fetchPage: async ({ iterator, onSent }) => {
        log.push(`fetch ${iterator}`);
        // written three event-loop turns after the call (one turn of waiting would apply too early)
        for (let i = 0; i < 3; i++) await turn();
        log.push(`sent ${iterator}`);
        onSent?.();
        await turn();
        return pageAt(iterator, 6);
      },
    },
    log,
  );
  await p.drain();
  expect(log).toEqual(['fetch null', 'sent null', 'fetch 2', 'sent 2', 'apply 2', 'fetch 4', 'sent 4', 'apply 4', 'apply 6']);
});

it('a prefetch that fails before it is written does not hold the page: it commits, then the failure is the next page', async () => {
  const log: string[] = [];
  let calls = 0;
  const p = poller(
    {
      drainMaxFailures: 1,
      fetchPage: async ({ iterator, onSent }) => {
        calls++;
        log.push(`fetch ${iterator}`);
        if (calls === 2) throw new Error('connection refused');
        onSent?.();
        return pageAt(iterator, 6);
      },
    },
    log,
  );
  await expect(p.drain()).rejects.toThrow();
  expect(log.slice(0, 3)).toEqual(['fetch null', 'fetch 2', 'apply 2']);
});

it('a prefetch never reported as written holds the page no longer than the cap, and its answer is still used', async () => {
  const log: string[] = [];
  let applied2: () => void = () => {};
  const page2Applied = new Promise<void>((resolve) => (applied2 = resolve));
  const p = poller(
    {
      fetchPage: async ({ iterator }) => {
        log.push(`fetch ${iterator}`);
        // the request for page 2 answers only after page 1 (nextIterator 2) was applied: without the cap, a deadlock
        if (iterator === '2') await page2Applied;
        return pageAt(iterator, 4);
      },
    },
    log,
    (nextIterator) => {
      if (nextIterator === '2') applied2();
    },
  );
  await p.drain();
  expect(log).toEqual(['fetch null', 'fetch 2', 'apply 2', 'apply 4']);
});
