/**
 * Durations of the retention settings: a whole number and a unit (`30d`, `12h`, `90m`, `1s`, `2w`,
 * `6y`) or `forever`. A year counts 366 days, so `6y` is never shorter than six calendar years.
 */
const UNIT_MS = {
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
  y: 366 * 86_400_000,
} as const;

/** The longest duration accepted (200 years): beyond it, say `forever`. */
export const MAX_DURATION_MS = 200 * UNIT_MS.y;

/** What a duration setting must look like, for error messages. */
export const DURATION_RULE = 'must be a duration: a whole number and a unit s, m, h, d, w or y (30d, 12h, 1s), or forever';

const PATTERN = /^([0-9]{1,9})(s|m|h|d|w|y)$/;

/** Parses a duration: milliseconds, null for `forever`, undefined when it is not one (or below 1 s). */
export function parseDuration(text: string): number | null | undefined {
  const trimmed = text.trim();
  if (trimmed === 'forever') return null;
  const match = PATTERN.exec(trimmed);
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  if (ms < UNIT_MS.s || ms > MAX_DURATION_MS) return undefined;
  return ms;
}

/** A duration as the settings write it: the largest unit that divides it exactly (`forever` for null). */
export function formatDuration(ms: number | null): string {
  if (ms === null) return 'forever';
  for (const unit of ['y', 'w', 'd', 'h', 'm', 's'] as const) {
    if (ms % UNIT_MS[unit] === 0 && ms >= UNIT_MS[unit]) return `${ms / UNIT_MS[unit]}${unit}`;
  }
  return `${ms}ms`;
}

/** One day: a retention shorter than this is accepted (tests, drills) with a logged warning. */
export const ONE_DAY_MS = UNIT_MS.d;
