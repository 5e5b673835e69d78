/** What the lag gauge needs from the worker state. */
export interface LagInputs {
  role: string;
  /** the last applied page said done=false */
  backlog: boolean;
  /** newest occurred_at (ms) applied since start, null before the first event */
  newestOccurredAt: number | null;
}

/**
 * How far behind the operator's feed this worker's store is, in seconds: while a backlog is
 * being drained, the time since the newest applied event occurred; 0 when the last page said
 * the feed was caught up (everything published is applied) and on a standby (it reports no
 * feed position). It keeps growing while a backlog stalls, and falls while a drain catches up.
 * Pure: `now` comes in.
 */
export function feedLagSeconds(inputs: LagInputs, now: number): number {
  if (inputs.role !== 'leader' || !inputs.backlog || inputs.newestOccurredAt === null) return 0;
  return Math.max(0, now - inputs.newestOccurredAt) / 1000;
}
