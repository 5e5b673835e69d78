import { serializeEvent, type EventParts } from './event-json.js';

/**
 * One credential's event feed: an append-only list of pre-serialized JSON entries.
 * Entries are never rewritten, so a page read twice (or replayed) is byte-identical.
 * An event id encodes the position where the event was first appended, so GET
 * /events/{id} needs no index.
 */
export class Feed {
  private readonly entries: string[] = [];
  // publication time of each entry (sandbox clock, epoch ms), non-decreasing: retention cuts by it
  private readonly publishedAt: number[] = [];
  // positions of well-formed sandbox events: the pool duplicate faults copy from
  private readonly eventPositions: number[] = [];

  constructor(
    private readonly idPrefix: string,
    private readonly now: () => number = () => Date.now(),
  ) {}

  get length(): number {
    return this.entries.length;
  }

  get eventCount(): number {
    return this.eventPositions.length;
  }

  /** Entries [start, end) as JSON strings. */
  slice(start: number, end: number): string[] {
    return this.entries.slice(start, end);
  }

  /** Appends a well-formed event with a fresh id; returns the id. */
  appendEvent(parts: EventParts, publishedAtMs?: number): string {
    const id = this.nextId();
    this.eventPositions.push(this.entries.length);
    this.push(serializeEvent(id, parts), publishedAtMs);
    return id;
  }

  /** The id the next appended entry gets. */
  nextId(): string {
    return `${this.idPrefix}${this.entries.length.toString(36)}`;
  }

  /** Appends an entry as-is (faults and injected raw values); it is not a duplicate source. */
  appendRaw(json: string, publishedAtMs?: number): void {
    this.push(json, publishedAtMs);
  }

  /** Re-appends the well-formed event at pool index `poolIndex` (same id, same bytes). */
  appendCopyOf(poolIndex: number, publishedAtMs?: number): void {
    const position = this.eventPositions[poolIndex];
    if (position === undefined) throw new RangeError(`no event at pool index ${poolIndex}`);
    this.push(this.entries[position] as string, publishedAtMs);
  }

  /**
   * The position of the oldest entry published after `cutoffMs` (the feed's length when none is):
   * entries before it are past retention. Binary search over the non-decreasing publication times.
   */
  firstPublishedAfter(cutoffMs: number): number {
    let low = 0;
    let high = this.publishedAt.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((this.publishedAt[mid] as number) > cutoffMs) high = mid;
      else low = mid + 1;
    }
    return low;
  }

  /**
   * `publishedAtMs` defaults to now; the store passes a step's due time, so when a lazily published
   * step was read does not change when it expires. Times are kept non-decreasing (a reordered
   * window or a clock set back must not break the binary search).
   */
  private push(json: string, publishedAtMs = this.now()): void {
    const last = this.publishedAt[this.publishedAt.length - 1] ?? -Infinity;
    this.publishedAt.push(Math.max(last, publishedAtMs));
    this.entries.push(json);
  }

  /** The entry first appended under `id`, or undefined when this feed never issued it or it is past retention. */
  entryById(id: string, oldestRetained = 0): string | undefined {
    if (!id.startsWith(this.idPrefix)) return undefined;
    const suffix = id.slice(this.idPrefix.length);
    if (!/^[0-9a-z]{1,12}$/.test(suffix)) return undefined;
    const position = Number.parseInt(suffix, 36);
    if (position.toString(36) !== suffix || position < oldestRetained) return undefined;
    const entry = this.entries[position];
    return entry?.startsWith(`{"id":"${id}"`) ? entry : undefined;
  }
}
