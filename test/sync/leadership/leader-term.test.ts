import { describe, expect, it } from 'vitest';
import { LeaderTerm } from '../../../src/sync/leadership/leader-term.js';
import type { PollLoop } from '../../../src/sync/poll/poll-loop.js';

function fakes(held: () => Promise<boolean>) {
  const warnings: string[] = [];
  let checks = 0;
  let stops = 0;
  const poller: PollLoop = {
    run: async () => {},
    drain: async () => {
      throw new Error('not used');
    },
    stop: async () => {
      stops += 1;
    },
  };
  const term = new LeaderTerm(
    {
      stillHeld: () => {
        checks += 1;
        return held();
      },
    },
    { warn: (message: unknown) => void warnings.push(String(message)) },
  );
  term.poller = poller;
  return { term, warnings, checks: () => checks, stops: () => stops };
}

describe('LeaderTerm: the poller asks its term before acting on a checkpoint someone else moved', () => {
  it('held: true, one lease check, the term goes on', async () => {
    const f = fakes(async () => true);
    expect(await f.term.confirm()).toBe(true);
    expect(f.checks()).toBe(1);
    expect(f.term.lost).toBe(false);
    expect(f.stops()).toBe(0);
  });

  it('not held: the term ends as lost, its poller is stopped, one line says why; later asks do not check again', async () => {
    const f = fakes(async () => false);
    expect(await f.term.confirm()).toBe(false);
    expect(f.term.lost).toBe(true);
    expect(f.stops()).toBe(1);
    expect(f.warnings).toEqual(['the checkpoint moved and the feed lease is no longer held (another worker leads): stepping down']);
    expect(await f.term.confirm()).toBe(false);
    expect(f.checks()).toBe(1);
    // the periodic check finding it lost too changes nothing more
    f.term.stepDown('lost the feed lease (its connection was closed): stepping down');
    expect(f.warnings).toHaveLength(1);
    expect(f.stops()).toBe(1);
  });

  it('a check that fails rejects, and the term is not ended by it (the caller writes nothing and retries)', async () => {
    const f = fakes(async () => {
      throw new Error('connection refused');
    });
    await expect(f.term.confirm()).rejects.toThrow('connection refused');
    expect(f.term.lost).toBe(false);
    expect(f.stops()).toBe(0);
  });
});
