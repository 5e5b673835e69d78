/** A timestamp as the console shows it: UTC, to the second. Pure. */
export function formatTime(value: Date | string | null | undefined): string {
  if (value === null || value === undefined) return '—';
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return '—';
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** A duration in words (`3 h 5 m`, `42 s`). Pure. */
export function formatAge(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '—';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} m`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/**
 * A count read up to `atMost + 1` rows (feed_overview's open_findings_capped, overdue_counts): above
 * `atMost` it says "more than atMost", never a figure the database did not count. Pure.
 */
export function formatCapped(n: number, atMost: number): string {
  return n > atMost ? `more than ${atMost}` : String(n);
}
