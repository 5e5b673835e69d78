import type { IntakeClient } from '../../../intake/client.js';
import { classifyEventsFailure, eventsFailureFacts } from '../../../sync/state/cursor-problem.js';

/** How far behind the operator's feed the store is, as `status` finds it. */
export interface StatusLag {
  /** seconds the oldest event not yet applied has waited (0: caught up); null when unknown */
  seconds: number | null;
  caught_up: boolean | null;
  /** how it was found, or why it could not be */
  detail: string;
  /** the operator refuses the stored position: the daemon has stopped consuming this feed for the same reason */
  cursorProblem?: 'expired' | 'refused';
}

/**
 * The lag from one page read at the stored position. Pure. The first event there is the oldest the
 * store has not applied, so the time since it occurred is how long the store is behind; an empty page
 * means caught up. An event without a readable occurred_at leaves the age unknown, but not whether it
 * is behind.
 */
export function lagFromPage(page: { events: unknown[] }, now: number): StatusLag {
  const [first] = page.events;
  if (first === undefined) return { seconds: 0, caught_up: true, detail: 'caught up: nothing after the stored position' };
  const occurredAt = (first as { occurred_at?: unknown } | null)?.occurred_at;
  const at = typeof occurredAt === 'string' ? Date.parse(occurredAt) : Number.NaN;
  if (Number.isNaN(at)) return { seconds: null, caught_up: false, detail: 'behind: the next event has no readable occurred_at' };
  const seconds = Math.max(0, Math.round((now - at) / 1000));
  return { seconds, caught_up: false, detail: `behind: the oldest unapplied event occurred ${seconds}s ago` };
}

/**
 * Asks the operator what follows the stored position: GET /events at the checkpoint's iterator, limit 1,
 * one attempt (reading changes nothing at the operator; nothing read is applied). A failure leaves the
 * lag unknown, saying why: `status` itself still answers from the database.
 */
export async function probeLag(client: Pick<IntakeClient, 'listEvents'>, iterator: string | null, now: () => number): Promise<StatusLag> {
  try {
    const page = await client.listEvents({ ...(iterator === null ? {} : { iterator }), limit: 1 });
    return lagFromPage(page, now());
  } catch (error) {
    const detail = `unknown: ${error instanceof Error ? error.message : String(error)}`;
    // the answer the poller stops on (classifyEventsFailure): status says so, as /readyz does
    const cursorProblem = classifyEventsFailure(eventsFailureFacts(error, iterator !== null));
    return { seconds: null, caught_up: null, detail, ...(cursorProblem ? { cursorProblem } : {}) };
  }
}
