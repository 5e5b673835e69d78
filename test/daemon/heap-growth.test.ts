import { spawnSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { HEAP_GROWTH_CAP_FROM_FEEDS, heapGrowthFlagFor } from '../../src/daemon/heap-growth.js';

describe('heapGrowthFlagFor', () => {
  test.each([
    [1, undefined],
    [HEAP_GROWTH_CAP_FROM_FEEDS - 1, undefined],
    [HEAP_GROWTH_CAP_FROM_FEEDS, '--heap-growing-percent=100'],
    [20, '--heap-growing-percent=100'],
  ])('%i feeds: %s', (feeds, flag) => {
    expect(heapGrowthFlagFor(feeds)).toBe(flag);
  });

  test('V8 of this node knows the flag set at run time (an unknown one is only a line on stderr)', () => {
    const flag = heapGrowthFlagFor(HEAP_GROWTH_CAP_FROM_FEEDS) ?? '';
    // in a child: the flag is process-wide
    const script = `require('node:v8').setFlagsFromString(${JSON.stringify(flag)}); process.stdout.write('set')`;
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(child.stdout).toBe('set');
    expect(child.stderr).toBe('');
    const misspelt = spawnSync(process.execPath, ['-e', script.replace('growing', 'growin')], { encoding: 'utf8' });
    expect(misspelt.stderr).toContain('unrecognized flag');
  });
});
