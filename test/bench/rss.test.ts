import { expect, test } from 'vitest';
import { parseProcStatus, readMemory } from '../../bench/rss.js';

const STATUS = ['Name:\tnode', 'VmPeak:\t 1100000 kB', 'VmHWM:\t  123456 kB', 'VmRSS:\t  100000 kB', 'Threads:\t11'].join('\n');

test.each([
  [STATUS, { rssKb: 100_000, hwmKb: 123_456 }],
  ['Name:\tnode\nVmRSS:\t 10 kB\n', undefined],
  ['Name:\tkthreadd\n', undefined],
  ['', undefined],
])('parseProcStatus(%#)', (text, expected) => {
  expect(parseProcStatus(text)).toEqual(expected);
});

test('reads this process, and nothing for a pid that does not exist', async () => {
  const mine = await readMemory(process.pid);
  expect(mine?.rssKb).toBeGreaterThan(0);
  expect(mine?.hwmKb).toBeGreaterThanOrEqual(mine?.rssKb ?? Infinity);
  expect(await readMemory(2 ** 22 + 1)).toBeUndefined();
});
