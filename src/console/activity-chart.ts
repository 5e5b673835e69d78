import { html, type SafeHtml } from './html.js';

const HOUR = 3_600_000;

/** Events per hour, oldest first, 24 buckets ending at the hour of `now`. Pure. */
export function hourlyBuckets(rows: readonly { hour: Date; events: number }[], now: number): number[] {
  const last = Math.floor(now / HOUR) * HOUR;
  const buckets = new Array<number>(24).fill(0);
  for (const row of rows) {
    const index = 23 - Math.round((last - row.hour.getTime()) / HOUR);
    if (index >= 0 && index < 24) buckets[index] = (buckets[index] ?? 0) + row.events;
  }
  return buckets;
}

/** The start of bucket `index` of hourlyBuckets(…, now), as `HH:00` UTC. Pure. */
export function bucketHour(index: number, now: number): string {
  const start = Math.floor(now / HOUR) * HOUR - (23 - index) * HOUR;
  return `${new Date(start).toISOString().slice(11, 13)}:00`;
}

/**
 * A bar chart of 24 hourly counts as inline SVG with labelled axes (events per hour up the side, 0
 * and the highest hour marked; the hours along the bottom, 24 h ago to now, UTC), a summary for
 * screen readers, and its text equivalent: the same counts as a table under a disclosure. Pure.
 */
export function activityChart(buckets: readonly number[], label: string, now = Date.now()): SafeHtml {
  const left = 30;
  const bottom = 26;
  const top = 6;
  const plotW = 192;
  const plotH = 40;
  const width = left + plotW + 6;
  const height = top + plotH + bottom;
  const max = Math.max(0, ...buckets);
  const scale = Math.max(1, max);
  const total = buckets.reduce((a, b) => a + b, 0);
  const bars = buckets.map((n, i) => {
    const h = n === 0 ? 0 : Math.max(1, Math.round((n / scale) * plotH));
    return html`<rect x="${left + i * 8}" y="${top + plotH - h}" width="7" height="${h}" fill="#1d3557"></rect>`;
  });
  const axisY = top + plotH;
  const tick = (i: number, text: string, anchor: string) =>
    html`<text x="${left + i * 8}" y="${axisY + 11}" font-size="9" text-anchor="${anchor}" fill="#1b1f24">${text}</text>`;
  const summary = `${label}: ${total} events in the last 24 hours, at most ${max} in one hour`;
  return html`<figure class="chart"><svg class="chart" role="img" aria-label="${summary}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">
    <line x1="${left}" y1="${top}" x2="${left}" y2="${axisY}" stroke="#4a525c"></line>
    <line x1="${left}" y1="${axisY}" x2="${left + plotW}" y2="${axisY}" stroke="#4a525c"></line>
    <text x="${left - 3}" y="${top + 7}" font-size="9" text-anchor="end" fill="#1b1f24">${max}</text>
    <text x="${left - 3}" y="${axisY}" font-size="9" text-anchor="end" fill="#1b1f24">0</text>
    <text x="8" y="${top + plotH / 2}" font-size="9" text-anchor="middle" fill="#1b1f24" transform="rotate(-90 8 ${top + plotH / 2})">events/h</text>
    ${bars}
    ${tick(0, bucketHour(0, now), 'start')}${tick(12, bucketHour(12, now), 'middle')}${tick(24, 'now', 'end')}
    <text x="${left + plotW / 2}" y="${height - 2}" font-size="9" text-anchor="middle" fill="#1b1f24">hour (UTC), last 24 h</text>
  </svg>
  <figcaption><details><summary>Events per hour as text</summary>
    <table class="mini"><caption>${label}, events received per hour (UTC)</caption><thead><tr><th scope="col">Hour</th><th scope="col">Events</th></tr></thead>
    <tbody>${buckets.map((n, i) => html`<tr><td>${bucketHour(i, now)}</td><td>${n}</td></tr>`)}</tbody></table></details></figcaption></figure>`;
}
