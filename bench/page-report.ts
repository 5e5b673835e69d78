import { FULL, MINIMAL } from './page-variants.js';

/** One variant's measurements: ms and WAL bytes per page of each round, and its HOT share. */
export interface LedgerRow {
  name: string;
  ms: number[];
  /** the backend's CPU time per page of each round (NaN: the server is on another machine) */
  cpu: number[];
  wal: number[];
  /** WAL of the records that touch the variant's own database (pg_walinspect), per page */
  ownWal: number[];
  hot: number | null;
}

export interface LedgerContext {
  rounds: number;
  pagesPerRound: number;
  filler: number;
  prescriptions: number;
  load: number[];
  readByThePage: string[];
  /** the daemon's drain of each round (empty: no --drain) */
  drains: Array<{ eventsPerS: number; peakRssMb: number }>;
  drainEvents: number;
}

// rounds with no figure (NaN: the WAL was recycled before it was read) are left out
const median = (values: number[]): number => {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

/** Prints the ledger as a markdown table (docs/performance.md takes it as is) and the ratio the issue targets. */
export function printLedger(rows: LedgerRow[], context: LedgerContext): void {
  const full = rows.find((r) => r.name === FULL);
  const minimal = rows.find((r) => r.name === MINIMAL);
  const fullMs = full ? median(full.ms) : Number.NaN;
  const fullWal = full ? median(full.ownWal) : Number.NaN;
  const fullCpu = full ? median(full.cpu) : Number.NaN;
  console.log(
    `\n${context.rounds} rounds x ${context.pagesPerRound} pages of 250 events per variant, ${context.prescriptions} prescriptions moved, ` +
      `${context.filler} untouched; load average ${context.load.map((l) => l.toFixed(2)).join(' -> ')}\n`,
  );
  console.log(
    '| variant | ms/page (median) | vs product | backend CPU ms/page (median) | vs product | WAL kB/page, own blocks (median) | vs product | cluster WAL kB/page (min) | HOT updates |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    const ms = median(row.ms);
    const wal = median(row.ownWal);
    const cluster = Math.min(...row.wal);
    const hot = row.hot === null ? '-' : `${(row.hot * 100).toFixed(0)}%`;
    const dMs = row === full ? '' : `${(((ms - fullMs) / fullMs) * 100).toFixed(0)}%`;
    const dWal = row === full ? '' : `${(((wal - fullWal) / fullWal) * 100).toFixed(0)}%`;
    const cpu = median(row.cpu);
    const dCpu = row === full ? '' : `${(((cpu - fullCpu) / fullCpu) * 100).toFixed(0)}%`;
    console.log(
      `| ${row.name} | ${ms.toFixed(2)} | ${dMs} | ${cpu.toFixed(2)} | ${dCpu} | ${(wal / 1024).toFixed(1)} | ${dWal} | ${(cluster / 1024).toFixed(1)} | ${hot} |`,
    );
  }
  if (full && minimal) {
    const minimalMs = median(minimal.ms);
    console.log(
      `\nproduct ceiling ${(250_000 / fullMs).toFixed(0)} events/s, minimal page ${(250_000 / minimalMs).toFixed(0)} events/s: ` +
        `ceiling/minimal = ${(minimalMs / fullMs).toFixed(2)}x (target >= 0.75x); WAL ${(fullWal / median(minimal.ownWal)).toFixed(2)}x the minimal page's`,
    );
    console.log(
      `on the backend's CPU: product ${fullCpu.toFixed(2)} ms/page, minimal page ${median(minimal.cpu).toFixed(2)} ms/page: ${(median(minimal.cpu) / fullCpu).toFixed(2)}x`,
    );
  }
  if (minimal && context.drains.length > 0) {
    const rates = context.drains.map((d) => d.eventsPerS);
    const drain = median(rates);
    const minimalRate = 250_000 / median(minimal.ms);
    console.log(
      `drain of ${context.drainEvents} events by the daemon's worker ${drain.toFixed(0)} events/s (median; per round ${rates.map((d) => d.toFixed(0)).join('/')}): ` +
        `drain/minimal = ${(drain / minimalRate).toFixed(2)}x (target >= 0.6x); worker peak RSS ${Math.max(...context.drains.map((d) => d.peakRssMb)).toFixed(1)} MB`,
    );
  }
  console.log(`read by the page itself, not switched off: ${context.readByThePage.join(', ')}`);
  console.log(`per round ms/page: ${rows.map((r) => `${r.name}: ${r.ms.map((m) => m.toFixed(1)).join('/')}`).join('; ')}`);
  console.log(`per round CPU ms/page: ${rows.map((r) => `${r.name}: ${r.cpu.map((m) => m.toFixed(1)).join('/')}`).join('; ')}`);
}
