import { z } from 'zod';
import { parseDuration } from '../lib/duration.js';
import { OVERDUE_STAGES, type OverdueStage, type StageDeadlines } from '../store-api/overdue/stages.js';

/** The environment variable of each stage's deadline. */
export const OVERDUE_SETTING: Readonly<Record<OverdueStage, string>> = {
  sent: 'OVERDUE_SENT',
  accepted: 'OVERDUE_ACCEPTED',
  ordered: 'OVERDUE_ORDERED',
  dispensed: 'OVERDUE_DISPENSED',
  cancel_requested: 'OVERDUE_CANCEL_REQUESTED',
};

/** The documented defaults (docs/configuration.md). */
export const DEFAULT_STAGE_DEADLINES: StageDeadlines = {
  sent: 2 * 3_600_000,
  accepted: 24 * 3_600_000,
  ordered: 48 * 3_600_000,
  dispensed: 72 * 3_600_000,
  cancel_requested: 48 * 3_600_000,
};

export const DEADLINE_RULE = 'must be a duration: a whole number and a unit s, m, h, d, w or y (2h, 48h, 3d), or off';

/** A stage deadline: a duration like the RETAIN_* settings (`2h`, `3d`), or `off` (null). `forever` is not one. */
export const deadlineSetting = z.string().transform((text, ctx) => {
  if (text.trim() === 'off') return null;
  const ms = text.trim() === 'forever' ? undefined : parseDuration(text);
  if (ms === undefined || ms === null) {
    ctx.addIssue({ code: 'custom', message: DEADLINE_RULE });
    return z.NEVER;
  }
  return ms;
});

/** One feed's deadlines: its FEEDS_FILE `overdue` overrides over the OVERDUE_* settings. */
export function feedStageDeadlines(
  global: StageDeadlines,
  overrides: Partial<Record<OverdueStage, number | null>> | undefined,
): StageDeadlines {
  const out = { ...global };
  for (const stage of OVERDUE_STAGES) {
    const value = overrides?.[stage];
    if (value !== undefined) out[stage] = value;
  }
  return out;
}

/** The OVERDUE_* settings of a parsed config, as stage deadlines. */
export function configStageDeadlines(config: Readonly<Record<string, unknown>>): StageDeadlines {
  return Object.fromEntries(OVERDUE_STAGES.map((s) => [s, config[OVERDUE_SETTING[s]] as number | null])) as unknown as StageDeadlines;
}
