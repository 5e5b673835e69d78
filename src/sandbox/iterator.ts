// The iterator is opaque to clients: base64url of a versioned feed position, so a
// future format can be told apart and random strings are refused, not misread.
const PREFIX = 'p1:';
const BODY = /^p1:(0|[1-9]\d{0,14})$/;

/** Encodes a feed position (the index of the next entry to return) as an opaque iterator. */
export function encodeIterator(position: number): string {
  return Buffer.from(`${PREFIX}${position}`, 'utf8').toString('base64url');
}

/** Decodes an iterator to a feed position; null when it was not produced by encodeIterator. */
export function decodeIterator(iterator: string): number | null {
  if (!/^[A-Za-z0-9_-]+$/.test(iterator)) return null;
  const match = BODY.exec(Buffer.from(iterator, 'base64url').toString('utf8'));
  if (!match) return null;
  const position = Number(match[1]);
  // round-trip check: rejects non-canonical encodings of the same text
  return encodeIterator(position) === iterator ? position : null;
}
