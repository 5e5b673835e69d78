import { createHash, type Hash } from 'node:crypto';

/** What a GET /events body held, read without keeping it: see EventsPageSkimmer. */
export interface SkimmedPage {
  /** the body's size in bytes */
  bytes: number;
  /** how many elements its top-level `events` array had */
  events: number;
  /** the top-level `meta` value as JSON text (undefined: absent, or over 64 KiB) */
  metaJson: string | undefined;
  /** the first event: sha256 and size of its JSON text as sent, and its `id` when a short string */
  first: { sha256: string; bytes: number; id: string | undefined } | undefined;
  /** the body ended inside a value, or was not one JSON object */
  complete: boolean;
}

const META_CAP = 64 * 1024;
const ID_CAP = 4 * 1024;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const isWhitespace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/**
 * Reads a GET /events body chunk by chunk in constant memory and keeps only what `events skip` needs
 * (see docs/decisions.md): `meta` (where the feed continues), the number of events, and the first
 * event's fingerprint and id. Nothing else is held, so a body of any size, nested to any depth, is
 * read: only the first three levels are tracked (the page object, the events array, one event).
 * It trusts nothing: a body that is not `{"events":[...],"meta":{...}}` in either order leaves
 * metaJson or first undefined, and the caller refuses to act on it.
 */
export class EventsPageSkimmer {
  #bytes = 0;
  #depth = 0;
  #inString = false;
  #escape = false;
  #inScalar = false;
  readonly #kinds: Array<'o' | 'a' | undefined> = [];
  readonly #expectKey: boolean[] = [];
  #key: number[] | undefined;
  #keyDepth = 0;
  #topKey: string | undefined;
  #eventKey: string | undefined;
  #events = 0;
  // the meta value being captured (from its first byte), and whether it is a container
  #meta: Buffer[] | undefined;
  #metaBytes = 0;
  #metaContainer = false;
  #metaDone: string | undefined;
  #metaOverflow = false;
  // the first event being hashed
  #hash: Hash | undefined;
  #firstBytes = 0;
  #firstContainer = false;
  #first: SkimmedPage['first'];
  #id: number[] | undefined;
  #idText: string | undefined;
  #ended = false;

  /** Feeds the next chunk of the body. */
  push(chunk: Uint8Array): void {
    let metaFrom = this.#meta ? 0 : -1;
    let firstFrom = this.#hash ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i] as number;
      this.#bytes++;
      if (this.#inString) {
        if (this.#escape) this.#escape = false;
        else if (b === BACKSLASH) this.#escape = true;
        else if (b === QUOTE) {
          this.#inString = false;
          this.#endString();
          continue;
        }
        if (this.#key && this.#key.length < 256) this.#key.push(b);
        if (this.#id && this.#id.length < ID_CAP) this.#id.push(b);
        continue;
      }
      if (isWhitespace(b) || b === 0x3a /* : */) {
        if (this.#inScalar) this.#inScalar = false;
        if (b === 0x3a && this.#depth <= 3) this.#expectKey[this.#depth] = false;
        continue;
      }
      if (b === 0x2c /* , */ || b === 0x7d /* } */ || b === 0x5d /* ] */) {
        this.#inScalar = false;
        // a scalar meta or first event ends before this byte
        if (this.#meta && !this.#metaContainer && this.#depth === 1) {
          metaFrom = this.#endMeta(chunk, metaFrom, i);
        }
        if (this.#hash && !this.#firstContainer && this.#depth === 2) {
          firstFrom = this.#endFirst(chunk, firstFrom, i);
        }
        if (b === 0x2c) {
          if (this.#depth <= 3 && this.#kinds[this.#depth] === 'o') this.#expectKey[this.#depth] = true;
          continue;
        }
        this.#depth--;
        if (this.#depth === 0) this.#ended = true;
        if (this.#meta && this.#metaContainer && this.#depth === 1) metaFrom = this.#endMeta(chunk, metaFrom, i + 1);
        if (this.#hash && this.#firstContainer && this.#depth === 2) firstFrom = this.#endFirst(chunk, firstFrom, i + 1);
        continue;
      }
      if (this.#inScalar) continue;
      // a value or a key starts here
      const keyPosition = this.#depth <= 3 && this.#kinds[this.#depth] === 'o' && this.#expectKey[this.#depth] === true;
      if (!keyPosition) {
        const container = b === 0x7b || b === 0x5b;
        if (this.#depth === 1 && this.#topKey === 'meta' && this.#meta === undefined && this.#metaDone === undefined) {
          this.#meta = [];
          this.#metaContainer = container;
          metaFrom = i;
        }
        if (this.#depth === 2 && this.#topKey === 'events' && this.#kinds[2] === 'a') {
          this.#events++;
          if (this.#events === 1) {
            this.#hash = createHash('sha256');
            this.#firstContainer = container;
            firstFrom = i;
          }
        }
        if (b === QUOTE && this.#depth === 3 && this.#hash && this.#eventKey === 'id' && this.#idText === undefined) this.#id = [];
      }
      if (b === QUOTE) {
        this.#inString = true;
        if (keyPosition) {
          this.#key = [];
          this.#keyDepth = this.#depth;
        }
      } else if (b === 0x7b || b === 0x5b) {
        this.#depth++;
        if (this.#depth <= 3) {
          this.#kinds[this.#depth] = b === 0x7b ? 'o' : 'a';
          this.#expectKey[this.#depth] = b === 0x7b;
        }
      } else {
        this.#inScalar = true;
      }
    }
    if (this.#meta && metaFrom >= 0) this.#captureMeta(chunk.subarray(metaFrom));
    if (this.#hash && firstFrom >= 0) this.#hashFirst(chunk.subarray(firstFrom));
  }

  /** What the body held; call after the last chunk. */
  result(): SkimmedPage {
    return {
      bytes: this.#bytes,
      events: this.#events,
      metaJson: this.#metaOverflow ? undefined : this.#metaDone,
      first: this.#first,
      complete: this.#ended && this.#depth === 0 && !this.#inString,
    };
  }

  #endString(): void {
    if (this.#key) {
      const key = decodeJsonString(this.#key);
      if (this.#keyDepth === 1) this.#topKey = key;
      // the keys of the first event only
      if (this.#keyDepth === 3 && this.#hash) this.#eventKey = key;
      this.#key = undefined;
    }
    if (this.#id) {
      this.#idText = this.#id.length < ID_CAP ? decodeJsonString(this.#id) : undefined;
      this.#id = undefined;
    }
  }

  #captureMeta(bytes: Uint8Array): void {
    this.#metaBytes += bytes.length;
    if (this.#metaBytes > META_CAP) this.#metaOverflow = true;
    else this.#meta?.push(Buffer.from(bytes));
  }

  #endMeta(chunk: Uint8Array, from: number, to: number): number {
    this.#captureMeta(chunk.subarray(Math.max(0, from), to));
    this.#metaDone = Buffer.concat(this.#meta ?? []).toString('utf8');
    this.#meta = undefined;
    return -1;
  }

  #hashFirst(bytes: Uint8Array): void {
    this.#hash?.update(bytes);
    this.#firstBytes += bytes.length;
  }

  #endFirst(chunk: Uint8Array, from: number, to: number): number {
    this.#hashFirst(chunk.subarray(Math.max(0, from), to));
    this.#first = { sha256: (this.#hash as Hash).digest('hex'), bytes: this.#firstBytes, id: this.#idText };
    this.#hash = undefined;
    return -1;
  }
}

// the bytes between a string's quotes, decoded as JSON would (escapes included); undefined-safe
function decodeJsonString(bytes: number[]): string {
  try {
    const text = JSON.parse(`"${Buffer.from(bytes).toString('utf8')}"`) as unknown;
    return typeof text === 'string' ? text : '';
  } catch {
    return '';
  }
}
