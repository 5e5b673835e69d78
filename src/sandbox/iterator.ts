// The iterator is opaque to clients: base64url of a versioned feed position and the simulator run
// that issued it. A random string is refused, not misread, and so is a position another run issued:
// the simulator keeps its feed in memory, so a restarted one holds a different feed, where the old
// position would silently skip events (a real operator refuses an iterator it did not issue, and
// the worker then stops naming `resync`).
const PREFIX = 'p2';
const BODY = /^p2:([0-9a-f]{8}):(0|[1-9]\d{0,14})$/;

/** Encodes a feed position (the index of the next entry to return) of simulator run `instance` as an opaque iterator. */
export function encodeIterator(position: number, instance: string): string {
  return Buffer.from(`${PREFIX}:${instance}:${position}`, 'utf8').toString('base64url');
}

/** Decodes an iterator to a feed position; null when this run (`instance`) did not produce it with encodeIterator. */
export function decodeIterator(iterator: string, instance: string): number | null {
  if (!/^[A-Za-z0-9_-]+$/.test(iterator)) return null;
  const match = BODY.exec(Buffer.from(iterator, 'base64url').toString('utf8'));
  if (!match || match[1] !== instance) return null;
  const position = Number(match[2]);
  // round-trip check: rejects non-canonical encodings of the same text
  return encodeIterator(position, instance) === iterator ? position : null;
}
