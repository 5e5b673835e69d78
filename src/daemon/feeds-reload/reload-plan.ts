import type { FeedConfig } from '../../config/feeds-file.js';

/** What a reload does to the running feeds: feeds are named, never their secrets. */
export interface ReloadPlan {
  /** new in the file: composed and started (standby, then leader within a lease check) */
  start: FeedConfig[];
  /** gone from the file: stopped, their lease released; their data stays under retention */
  stop: string[];
  /** in both with any value changed (credentials, base URL, retention, deadlines): stopped, then started with the new values */
  restart: FeedConfig[];
  /** in both, unchanged: left running */
  keep: string[];
}

/** Whether a feed's configuration is the same in both files (every field, secrets included). Pure. */
export function sameFeed(a: FeedConfig, b: FeedConfig): boolean {
  return canonical(a) === canonical(b);
}

// key order must not matter: a reordered file is the same configuration
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'undefined';
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
}

/**
 * Pure: how to go from the running feeds to a newly read file. A feed stopped by a 401 is restarted
 * like any other when its values changed (a rotated secret), and left stopped when they did not
 * (the same secret would be refused again). Lists keep the new file's order; `stop` the running order.
 */
export function planReload(running: readonly FeedConfig[], next: readonly FeedConfig[]): ReloadPlan {
  const before = new Map(running.map((f) => [f.name, f]));
  const after = new Set(next.map((f) => f.name));
  const plan: ReloadPlan = { start: [], stop: [], restart: [], keep: [] };
  for (const feed of next) {
    const old = before.get(feed.name);
    if (!old) plan.start.push(feed);
    else if (sameFeed(old, feed)) plan.keep.push(feed.name);
    else plan.restart.push(feed);
  }
  for (const feed of running) if (!after.has(feed.name)) plan.stop.push(feed.name);
  return plan;
}

/** Whether a plan changes anything. Pure. */
export function planChanges(plan: ReloadPlan): boolean {
  return plan.start.length + plan.stop.length + plan.restart.length > 0;
}

/** The plan as log fields: feed names only. Pure. */
export function planSummary(plan: ReloadPlan): { started: string[]; stopped: string[]; restarted: string[]; unchanged: number } {
  return {
    started: plan.start.map((f) => f.name),
    stopped: plan.stop,
    restarted: plan.restart.map((f) => f.name),
    unchanged: plan.keep.length,
  };
}
