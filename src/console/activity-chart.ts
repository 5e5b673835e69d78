import { html, type SafeHtml } from './html.js';

/** Events per hour, oldest first, 24 buckets ending at the hour of `now`. Pure. */
export function hourlyBuckets(rows: readonly { hour: Date; events: number }[], now: number): number[] {
  const HOUR = 3_600_000;
  const last = Math.floor(now / HOUR) * HOUR;
  const buckets = new Array<number>(24).fill(0);
  for (const row of rows) {
    const index = 23 - Math.round((last - row.hour.getTime()) / HOUR);
    if (index >= 0 && index < 24) buckets[index] = (buckets[index] ?? 0) + row.events;
  }
  return buckets;
}

/** A small bar chart of 24 hourly counts, as inline SVG with a text alternative. Pure. */
export function activityChart(buckets: readonly number[], label: string): SafeHtml {
  const width = 192;
  const height = 40;
  const max = Math.max(1, ...buckets);
  const total = buckets.reduce((a, b) => a + b, 0);
  const bars = buckets.map((n, i) => {
    const h = n === 0 ? 0 : Math.max(1, Math.round((n / max) * (height - 2)));
    return html`<rect x="${i * 8}" y="${height - h}" width="7" height="${h}" fill="#1d3557"></rect>`;
  });
  return html`<svg class="chart" role="img" aria-label="${label}: ${total} events in the last 24 hours, at most ${max === 1 && total === 0 ? 0 : max} in one hour" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${bars}</svg>`;
}
