import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { EventsPageSkimmer } from '../../src/intake/events-page-skim.js';

function skim(body: string, chunkSize: number) {
  const bytes = Buffer.from(body, 'utf8');
  const skimmer = new EventsPageSkimmer();
  for (let at = 0; at < bytes.length; at += chunkSize) skimmer.push(bytes.subarray(at, at + chunkSize));
  return skimmer.result();
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const meta = '{"limit":1,"iterator":"it-\\"7\\"","done":false}';

describe('EventsPageSkimmer: meta, count and the first event of a body it does not keep', () => {
  const first = '{"id":"ev-\\u00e91","payload":{"id":"inner","s":"a\\"]},{[","deep":[[[[{"x":"}"}]]]]}}';
  test.each([
    ['events first', `{"events":[${first}],"meta":${meta}}`],
    ['meta first', `{"meta":${meta},"events":[${first}]}`],
    ['with whitespace and extra keys', `{ "x" : [ {"meta":1} ] ,\n "events" : [ ${first} ] , "meta" : ${meta} , "y": "meta" }`],
  ])('%s, at every chunk size', (_label, body) => {
    for (const size of [1, 2, 3, 7, 64, 100_000]) {
      const result = skim(body, size);
      expect(result).toEqual({
        bytes: Buffer.byteLength(body),
        events: 1,
        metaJson: meta,
        first: { sha256: sha(first), bytes: Buffer.byteLength(first), id: 'ev-é1' },
        complete: true,
      });
      expect(JSON.parse(result.metaJson as string)).toEqual({ limit: 1, iterator: 'it-"7"', done: false });
    }
  });

  test('a 50 MB event nested 1,000,000 levels deep is read in constant memory', () => {
    const skimmer = new EventsPageSkimmer();
    const head = '{"events":[{"id":"huge","payload":';
    skimmer.push(Buffer.from(head));
    const open = Buffer.alloc(1_000_000, '[');
    const close = Buffer.alloc(1_000_000, ']');
    const filler = Buffer.from(`,"${'x'.repeat(1024 * 1024)}"`);
    const hash = createHash('sha256').update('{"id":"huge","payload":').update(open).update(close);
    skimmer.push(open);
    skimmer.push(close);
    for (let n = 0; n < 48; n++) {
      skimmer.push(filler);
      hash.update(filler);
    }
    skimmer.push(Buffer.from('}],"meta":{"limit":1,"iterator":"9","done":true}}'));
    hash.update('}');
    const result = skimmer.result();
    expect(result).toMatchObject({ events: 1, metaJson: '{"limit":1,"iterator":"9","done":true}', complete: true });
    expect(result.first).toEqual({ sha256: hash.digest('hex'), bytes: expect.any(Number), id: 'huge' });
  });

  test.each([
    ['two events', `{"events":[{"id":"a"},{"id":"b"}],"meta":${meta}}`, { events: 2 }],
    ['no events', `{"events":[],"meta":${meta}}`, { events: 0, first: undefined }],
    ['a scalar event', `{"events":[42],"meta":${meta}}`, { events: 1, first: { sha256: sha('42'), bytes: 2, id: undefined } }],
    ['no meta', '{"events":[{"id":"a"}]}', { metaJson: undefined }],
    ['cut short', `{"events":[{"id":"a"}],"meta":${meta}`, { complete: false }],
    ['an id that is not a string', `{"events":[{"id":7}],"meta":${meta}}`, { first: expect.objectContaining({ id: undefined }) }],
  ])('%s', (_label, body, expected) => {
    expect(skim(body, 5)).toMatchObject(expected);
  });
});
