import { describe, expect, it } from 'vitest';
import { debugTrace } from '../../../src/cli/context/errors.js';

describe('INTAKE_SYNC_DEBUG traces', () => {
  it("print names, codes and frames of the cause chain, never a failed query's parameters", () => {
    const cause = Object.assign(new Error('duplicate key value violates unique constraint'), {
      code: '23505',
      parameters: ['Zebediah Quaxworth'],
    });
    const error = new Error('Failed query: select register($1)\nparams: Zebediah Quaxworth,1931-02-29', { cause });
    const trace = debugTrace(error);
    expect(trace).not.toContain('Zebediah');
    expect(trace).not.toContain('1931-02-29');
    expect(trace).toContain('Error\n');
    expect(trace).toContain('caused by: Error (23505)');
    expect(trace).toMatch(/^\s+at .*context\/errors\.test\.ts/m);
  });
});
