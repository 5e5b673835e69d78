import { serializeEvent, type EventParts } from './event-json.js';

/**
 * One credential's event feed: an append-only list of pre-serialized JSON entries.
 * Entries are never rewritten, so a page read twice (or replayed) is byte-identical.
 * An event id encodes the position where the event was first appended, so GET
 * /events/{id} needs no index.
 */
export class Feed {
  private readonly entries: string[] = [];
  // positions of well-formed sandbox events: the pool duplicate faults copy from
  private readonly eventPositions: number[] = [];

  constructor(private readonly idPrefix: string) {}

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
  appendEvent(parts: EventParts): string {
    const id = this.nextId();
    this.eventPositions.push(this.entries.length);
    this.entries.push(serializeEvent(id, parts));
    return id;
  }

  /** The id the next appended entry gets. */
  nextId(): string {
    return `${this.idPrefix}${this.entries.length.toString(36)}`;
  }

  /** Appends an entry as-is (faults and injected raw values); it is not a duplicate source. */
  appendRaw(json: string): void {
    this.entries.push(json);
  }

  /** Re-appends the well-formed event at pool index `poolIndex` (same id, same bytes). */
  appendCopyOf(poolIndex: number): void {
    const position = this.eventPositions[poolIndex];
    if (position === undefined) throw new RangeError(`no event at pool index ${poolIndex}`);
    this.entries.push(this.entries[position] as string);
  }

  /** The entry first appended under `id`, or undefined when this feed never issued it. */
  entryById(id: string): string | undefined {
    if (!id.startsWith(this.idPrefix)) return undefined;
    const suffix = id.slice(this.idPrefix.length);
    if (!/^[0-9a-z]{1,12}$/.test(suffix)) return undefined;
    const position = Number.parseInt(suffix, 36);
    if (position.toString(36) !== suffix) return undefined;
    const entry = this.entries[position];
    return entry?.startsWith(`{"id":"${id}"`) ? entry : undefined;
  }
}
