import { CliUsageError } from '../../context/errors.js';

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
const DURATION = /^([0-9]{1,6})(s|m|h|d|w)$/;
/** A date, or a date and time with an optional zone (2024-12-10, 2024-12-10T08:00:00Z, 2024-12-10 08:00+01:00). */
const TIMESTAMP = /^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?$/;

/**
 * `--since`: a duration back from `now` (`90s`, `15m`, `12h`, `30d`, `2w`) or a timestamp
 * (ISO 8601; without a zone it is UTC). Anything else is a usage error naming the option.
 */
export function parseSince(value: string, now: Date): Date {
  const duration = DURATION.exec(value);
  if (duration) {
    const ms = Number(duration[1]) * UNIT_MS[duration[2] as keyof typeof UNIT_MS];
    return new Date(now.getTime() - ms);
  }
  if (TIMESTAMP.test(value) && isCalendarDate(value.slice(0, 10))) {
    const time = value.length > 10 ? value.slice(11) : '00:00:00';
    const zoned = /(Z|[+-][0-9]{2}:?[0-9]{2})$/.test(time) ? time : `${time}Z`;
    const at = new Date(`${value.slice(0, 10)}T${zoned}`);
    if (!Number.isNaN(at.getTime())) return at;
  }
  throw new CliUsageError(
    `--since ${JSON.stringify(value)}: give a duration back from now (90s, 15m, 12h, 30d, 2w) or a timestamp (2024-12-10 or 2024-12-10T08:00:00Z)`,
  );
}

/** Date accepts 2024-02-31 as March 2nd: a calendar date must read back as given. */
function isCalendarDate(date: string): boolean {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d)).toISOString().slice(0, 10) === date;
}
