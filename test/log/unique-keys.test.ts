import { Writable } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { createLogger } from '../../src/log/log.js';

/** Every top-level key of one flat JSON line, in order, duplicates kept (JSON.parse would hide them). */
function rawKeys(line: string): string[] {
  return [...line.matchAll(/[{,]"([^"]+)":/g)].map((m) => m[1] ?? '');
}

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, log: createLogger({ level: 'debug', destination }) };
}

const duplicates = (keys: string[]) => keys.filter((key, index) => keys.indexOf(key) !== index);

describe('one key per field in every JSON line', () => {
  test('a child re-binding component (worker, then poller) keeps the innermost', () => {
    const { lines, log } = capture();
    log.child({ component: 'worker', feed: 'a' }).child({ component: 'poller' }).info('x');
    const [line = ''] = lines;
    expect(duplicates(rawKeys(line))).toEqual([]);
    expect(JSON.parse(line)).toMatchObject({ component: 'poller', feed: 'a', msg: 'x' });
  });

  test('a call repeating a bound key with the same value writes it once', () => {
    const { lines, log } = capture();
    log.child({ component: 'resync', feed: 'a' }).info({ feed: 'a', version: 3 }, 'y');
    const [line = ''] = lines;
    expect(duplicates(rawKeys(line))).toEqual([]);
    expect(JSON.parse(line)).toMatchObject({ component: 'resync', feed: 'a', version: 3 });
  });

  test("a call giving a bound key another value: the call's value, once; the binding is kept for later lines", () => {
    const { lines, log } = capture();
    const child = log.child({ component: 'worker', feed: 'a' });
    child.warn({ feed: 'b', n: 1 }, 'z');
    child.info('after');
    const [first = '', second = ''] = lines;
    expect(duplicates(rawKeys(first))).toEqual([]);
    expect(JSON.parse(first)).toMatchObject({ component: 'worker', feed: 'b', n: 1 });
    expect(JSON.parse(second)).toMatchObject({ component: 'worker', feed: 'a' });
  });

  test('redaction still applies to bindings and objects', () => {
    const { lines, log } = capture();
    log.child({ component: 'c', patient: 'Jane' }).child({ patient: 'John' }).info({ email: 'x@y' }, 'r');
    const [line = ''] = lines;
    expect(line).not.toMatch(/Jane|John|x@y/);
    expect(duplicates(rawKeys(line))).toEqual([]);
  });
});
