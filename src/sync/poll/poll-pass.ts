import { checkpointNeedsTouch, classifyEventsFailure, eventsFailureFacts, resetToBlame, suspectsGap } from '../state/cursor-problem.js';
import type { FailureSource } from '../state/worker-snapshot.js';
import { OversizedEventError } from './errors/oversized-event-error.js';
import { failureOutcome } from './outcome-policy.js';
import type { PassOutcome } from './pass-outcome.js';
import type { AppliedPage, LoadedCheckpoint, PassMemory, PollerDeps } from './poll-loop.js';
import type { PrefetchPipeline } from './prefetch-pipeline.js';

/**
 * One pass of the poll loop: one checkpoint load followed by pages until done, a failure, a conflict or
 * stop. A page that brings nothing at the iterator it was asked for writes nothing: an empty poll costs
 * the checkpoint read (which also notices a reset) and the request, no transaction. `stop` aborts every
 * request; a page being applied commits or rolls back.
 */
export async function runPass(deps: PollerDeps, memory: PassMemory, pipeline: PrefetchPipeline, stop: AbortSignal): Promise<PassOutcome> {
  const { state, clock } = deps;
  const failure = (source: FailureSource, error: unknown) => failureOutcome(source, error, stop.aborted);
  let { known } = memory;
  // anything but a pass that ended caught up or without progress leaves the position unknown
  memory.known = undefined;
  // stopped on a cursor problem, every wait reads the checkpoint again: resync or a reset moves it
  const reload = !known || memory.heldAtVersion !== undefined || clock.now() - known.at >= (deps.checkpointReloadMs ?? 0);
  if (!known || reload) {
    let checkpoint: LoadedCheckpoint;
    try {
      checkpoint = await deps.loadCheckpoint();
    } catch (error) {
      return failure('database', error);
    }
    // moved by someone else since this loop last knew it: before reading, reporting or writing on top of a
    // position another worker may have written, make sure this one still leads (a resumed zombie stops here)
    if (deps.confirmLeadership && memory.lastVersion !== undefined && checkpoint.version !== memory.lastVersion) {
      let leading: boolean;
      try {
        leading = await deps.confirmLeadership();
      } catch (error) {
        return failure('database', error);
      }
      if (!leading) {
        // the leader loop stops this loop as it steps down (confirmLeadership's contract): wait for that, writing nothing
        if (!stop.aborted) await new Promise<void>((resolve) => stop.addEventListener('abort', () => resolve(), { once: true }));
        return { kind: 'stopped' };
      }
    }
    memory.lastVersion = checkpoint.version;
    if (!deps.secondarySource) state.checkpointLoaded(checkpoint);
    const updatedAtMs = checkpoint.updatedAt instanceof Date ? checkpoint.updatedAt.getTime() : checkpoint.updatedAt;
    known = { iterator: checkpoint.iterator, version: checkpoint.version, at: clock.now(), updatedAtMs };
    if (memory.heldAtVersion !== undefined) {
      if (known.version === memory.heldAtVersion) return { kind: 'held' };
      memory.heldAtVersion = undefined;
      state.cursorCleared();
      deps.log.warn({ version: known.version }, 'the checkpoint moved (resync or reset): consuming the feed again');
    }
    if (suspectsGap({ iterator: known.iterator, updatedAtMs }, clock.now(), deps.retentionMs)) {
      return { kind: 'cursor', problem: 'gap-suspected', version: known.version };
    }
  }
  let { iterator, version } = known;
  pipeline.beginPass();
  let pending = pipeline.fetch(iterator, stop);
  for (;;) {
    const fetchStartedAt = pending.startedAt;
    memory.lastFetchStartedAt = fetchStartedAt;
    const fetched = await pipeline.take(pending);
    if (!fetched.ok) {
      pending.next?.abort.abort();
      // the page was asked for at `iterator` (a prefetch too: the loop takes pages in order, so it is the position just committed)
      if (!stop.aborted && fetched.error instanceof OversizedEventError)
        return { kind: 'cursor', problem: 'oversized-event', version, at: iterator };
      const problem = stop.aborted ? null : classifyEventsFailure(eventsFailureFacts(fetched.error, iterator !== null));
      if (problem) return { kind: 'cursor', problem, version, reset: await latestResetToBlame(deps, iterator) };
      return failure('upstream', fetched.error);
    }
    if (stop.aborted) {
      pending.next?.abort.abort();
      return { kind: 'stopped' };
    }
    const page = fetched.value;
    const advanced = page.meta.iterator !== iterator;
    if (!advanced && page.events.length === 0) {
      // nothing to store and no position to move: no transaction (the version stays, so does the audit of pages)
      const noProgress = !page.meta.done;
      if (deps.touchCheckpoint && checkpointNeedsTouch(known.updatedAtMs, clock.now(), deps.retentionMs)) {
        // the retention check reads a quiet checkpoint's age as the time nobody polled: say we did
        try {
          await deps.touchCheckpoint(version);
        } catch (error) {
          return failure('database', error);
        }
        known.updatedAtMs = clock.now();
      }
      state.pollSucceeded({ done: page.meta.done, noProgress, durationMs: clock.now() - fetchStartedAt });
      memory.known = known;
      return noProgress ? { kind: 'no-progress' } : { kind: 'caught-up' };
    }
    // pipelining: the next page's position is known now, so fetch it while this one commits (unless
    // that request already left when this page arrived)
    let prefetch = pending.next;
    if (!page.meta.done && advanced) {
      if (!prefetch) {
        prefetch = pipeline.fetch(page.meta.iterator, stop);
        // the request is written several event-loop turns after it is asked for: let it leave before this
        // page's validation and statement take the thread (one turn was not enough: over a 50 ms network
        // the request still left 2.5 ms late per page, behind the validation). Without a report, one turn.
        await (prefetch.sent ? sentOrCap(prefetch.sent) : new Promise<void>((resolve) => setImmediate(resolve)));
      }
    } else if (prefetch) {
      prefetch.abort.abort();
      prefetch = undefined;
    }
    let applied: AppliedPage;
    try {
      // a page that arrived while the loop waited for it comes unprepared: applyPage validates it, behind the prefetch
      applied = await deps.applyPage({
        expectedVersion: version,
        nextIterator: page.meta.iterator,
        events: page.events,
        ...(page.prepared ? { prepared: page.prepared } : {}),
      });
    } catch (error) {
      // the prefetched pages were read from a position that was never committed
      prefetch?.abort.abort();
      return failure('database', error);
    }
    const noProgress = !page.meta.done && !advanced && applied.inserted === 0;
    iterator = page.meta.iterator;
    version = applied.version;
    memory.lastVersion = version;
    // found by preparePage (in the prefetch, or by applyPage for a page the loop waited for)
    const newest = page.prepared?.newestOccurredAt ?? applied.newestOccurredAt;
    const record = {
      ...applied,
      durationMs: clock.now() - fetchStartedAt,
      done: page.meta.done,
      ...(newest === undefined ? {} : { newestOccurredAt: newest }),
    };
    state.pageApplied(record, deps.secondarySource ? null : { iterator, version }, noProgress);
    // a committed compare-and-set proves the position as well as a read would
    known = { iterator, version, at: clock.now(), updatedAtMs: clock.now() };
    if (page.meta.done || noProgress) memory.known = known;
    if (page.meta.done) return { kind: 'caught-up' };
    if (noProgress) return { kind: 'no-progress' };
    if (stop.aborted) {
      prefetch?.abort.abort();
      return { kind: 'stopped' };
    }
    // same iterator but new events: ask again at once; a repeat that brings nothing is no-progress
    pending = prefetch ?? pipeline.fetch(iterator, stop);
  }
}

/**
 * The longest a page waits for its prefetch to be written: a request still opening its connection (a
 * handshake per round trip) or queued is not worth holding the page's commit for.
 */
const SENT_WAIT_CAP_MS = 10;

function sentOrCap(sent: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const cap = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, SENT_WAIT_CAP_MS);
    timer.unref();
  });
  return Promise.race([sent, cap]).finally(() => clearTimeout(timer));
}

// best effort: without the reset history the advice stays the generic one
async function latestResetToBlame(deps: PollerDeps, iterator: string | null) {
  if (!deps.latestReset || iterator === null) return null;
  try {
    return resetToBlame(iterator, await deps.latestReset());
  } catch {
    return null;
  }
}
