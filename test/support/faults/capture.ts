/**
 * Everything a scenario saw come out of the system under test, kept per source
 * so a secret or canary split across two stream chunks is still found.
 */
export type CaptureKind =
  /** a process's stderr, or stdout of a daemon: log lines */
  | 'log'
  /** stdout of a CLI command: command output */
  | 'output'
  /** a /healthz or /readyz body */
  | 'health'
  /** a /metrics body */
  | 'metrics';

export interface CapturedSource {
  source: string;
  kind: CaptureKind;
  text: string;
}

/** Collects output by source name (e.g. `worker-3:stderr`, `worker-3:/readyz`). */
export class OutputCapture {
  private readonly sources = new Map<string, { kind: CaptureKind; chunks: string[] }>();

  /** Appends text to a source; the kind is fixed by the first append. */
  add(source: string, kind: CaptureKind, text: string): void {
    let entry = this.sources.get(source);
    if (!entry) {
      entry = { kind, chunks: [] };
      this.sources.set(source, entry);
    }
    entry.chunks.push(text);
  }

  /** Every source with its full text, in first-seen order. */
  all(): CapturedSource[] {
    return [...this.sources].map(([source, { kind, chunks }]) => ({ source, kind, text: chunks.join('') }));
  }

  /** Total captured characters, for the report line. */
  size(): number {
    let total = 0;
    for (const { chunks } of this.sources.values()) for (const c of chunks) total += c.length;
    return total;
  }
}
