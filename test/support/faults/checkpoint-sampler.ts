import { expect } from 'vitest';
import type postgres from 'postgres';
import { CheckpointViolation } from './checkpoint-violation.js';
import type { FeedEntry } from './feed-reader.js';
import type { FeedPositions } from './feed-positions.js';

export interface SamplerReport {
  samples: number;
  /** samples that could not read the database (expected while it is down) */
  unavailable: number;
  /** the first few reasons a sample could not be taken */
  unavailableReasons: string[];
  violations: string[];
  highestVersion: number;
}

/**
 * Watches a feed's checkpoint from a side connection while workers drain it and
 * checks, on every sample, inside one REPEATABLE READ snapshot:
 *  - the version never goes down, and the iterator never changes without it going up;
 *  - the position never goes back (unless a reset was announced with allowRewind);
 *  - every event the feed served before that position is already in `events`
 *    (the checkpoint is never ahead of applied data).
 * Events are never deleted, so each sample only checks the new stretch.
 */
export class CheckpointSampler {
  private readonly report: SamplerReport = {
    samples: 0,
    unavailable: 0,
    unavailableReasons: [],
    violations: [],
    highestVersion: 0,
  };
  private last: { version: number; iterator: string | null; position: number } | undefined;
  private verifiedUpTo = 0;
  private running: Promise<void> | undefined;
  private stopping = false;

  /**
   * @param applicable ids of the entries that must end up in `events` (well-formed
   *   ones); other entries (malformed) are not looked for.
   */
  constructor(
    private readonly sql: postgres.Sql,
    private readonly feedName: string,
    private readonly feed: readonly FeedEntry[],
    private readonly positions: FeedPositions,
    private readonly applicable: ReadonlySet<string>,
  ) {}

  start(intervalMs = 250): void {
    this.running = (async () => {
      while (!this.stopping) {
        await this.sampleOnce();
        await new Promise((resolve) => setTimeout(resolve, intervalMs));
      }
    })();
  }

  /** Stops sampling after one last sample and returns what was seen. */
  async stop(): Promise<SamplerReport> {
    this.stopping = true;
    await this.running;
    await this.sampleOnce();
    return structuredClone(this.report);
  }

  /** A checkpoint reset is about to move the position back; accept one rewind. */
  allowRewind(): void {
    if (this.last) this.last = { ...this.last, position: 0 };
    this.verifiedUpTo = 0;
  }

  async sampleOnce(): Promise<void> {
    try {
      await this.sql.begin('isolation level repeatable read read only', async (tx) => {
        const [row] = await tx<{ iterator: string | null; version: string | number }[]>`
          select iterator, version from intake_sync.feed_checkpoints where feed = ${this.feedName}`;
        if (!row) return;
        this.report.samples++;
        await this.check(tx, { iterator: row.iterator, version: Number(row.version) });
      });
    } catch (error) {
      if (error instanceof CheckpointViolation) this.report.violations.push(error.message);
      else {
        this.report.unavailable++;
        if (this.report.unavailableReasons.length < 5) {
          this.report.unavailableReasons.push(error instanceof Error ? error.message : String(error));
        }
      }
    }
  }

  private async check(tx: postgres.TransactionSql, row: { iterator: string | null; version: number }): Promise<void> {
    const previous = this.last;
    if (previous && row.version < previous.version) {
      throw new CheckpointViolation(`version went back from ${previous.version} to ${row.version}`);
    }
    if (previous && row.version === previous.version && row.iterator !== previous.iterator) {
      throw new CheckpointViolation(`iterator changed at version ${row.version} without a version bump`);
    }
    this.report.highestVersion = Math.max(this.report.highestVersion, row.version);
    const position = row.iterator === null ? 0 : await this.positions.positionOf(row.iterator);
    this.last = { ...row, position };
    if (previous && position < previous.position) {
      throw new CheckpointViolation(`position went back from ${previous.position} to ${position} (version ${row.version})`);
    }
    if (position <= this.verifiedUpTo) return;
    const wanted = new Set<string>();
    for (const entry of this.feed.slice(this.verifiedUpTo, position)) {
      if (entry.id && this.applicable.has(entry.id)) wanted.add(entry.id);
    }
    const ids = [...wanted];
    const present = ids.length ? await tx<{ id: string }[]>`select id from intake_sync.events where id = any(${tx.array(ids)})` : [];
    if (present.length !== ids.length) {
      const have = new Set(present.map((r) => r.id));
      const missing = ids.filter((id) => !have.has(id));
      throw new CheckpointViolation(
        `checkpoint (version ${row.version}, position ${position}) is ahead of applied data: ${missing.length} earlier events not in events, e.g. ${missing.slice(0, 3).join(', ')}`,
      );
    }
    this.verifiedUpTo = position;
  }
}

/** The shared end-of-scenario check: no sampler saw a checkpoint invariant broken. */
export function expectCheckpointSound(...reports: SamplerReport[]): void {
  const violations = reports.flatMap((r) => r.violations);
  expect(violations, `checkpoint invariants broken:\n${violations.slice(0, 10).join('\n')}`).toEqual([]);
}
