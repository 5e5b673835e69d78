import { MALFORMED_VARIANTS, serializeMalformedEvent, type EventParts } from './event-json.js';
import type { FaultConfig } from './faults.js';
import type { Feed } from './feed.js';
import { randomIndex, type Random } from './prng.js';

/** The name the unknown-name fault uses: plausible for a pharmacy, absent from the 2024-12-10 enum. */
export const UNKNOWN_EVENT_NAME = 'transferred';

/**
 * Appends one event to a feed, then the content faults it rolls: a copy of an
 * earlier event (same id), a malformed entry, an extra event with an unknown name.
 * Faults are written into the feed itself, so every re-read sees them identically.
 */
export function publishEvent(feed: Feed, parts: EventParts, faults: FaultConfig, random: Random, publishedAtMs?: number): void {
  feed.appendEvent(parts, publishedAtMs);
  if (faults.duplicateRate > 0 && random() < faults.duplicateRate) {
    feed.appendCopyOf(randomIndex(random, feed.eventCount), publishedAtMs);
  }
  if (faults.malformedRate > 0 && random() < faults.malformedRate) {
    const variant = MALFORMED_VARIANTS[randomIndex(random, MALFORMED_VARIANTS.length)] ?? 'not-an-object';
    feed.appendRaw(serializeMalformedEvent(feed.nextId(), parts, variant), publishedAtMs);
  }
  if (faults.unknownNameRate > 0 && random() < faults.unknownNameRate) {
    feed.appendEvent({ ...parts, name: UNKNOWN_EVENT_NAME }, publishedAtMs);
  }
}
