import { describe, expect, it } from 'vitest';
import { cachedPlanRunner, productStatements, runnerOf } from '../../bench/page-statements.js';

describe('bench:page cached-plan runner', () => {
  it('writes the page statement into the procedure with its three parameters as variables', () => {
    const text = cachedPlanRunner('public.bench_run_x', {
      versionOf: 'select 1',
      lock: 'select 1 from (select pg_advisory_xact_lock_shared(1)) as match_lock',
      page: 'select $2::bigint as version from json_to_recordset($1::json) r where $3 is not null and $10 = 1',
    });
    expect(text).toContain('json_to_recordset(bench_events::json)');
    expect(text).toContain('select bench_expected::bigint as version');
    expect(text).toContain('where bench_iterator is not null');
    // only $1..$3 are the page's parameters: nothing else is renamed
    expect(text).toContain('$10 = 1');
    expect(text).toContain('perform 1 from (select pg_advisory_xact_lock_shared(1)) as match_lock;');
  });

  it("leaves no placeholder in the product's own page statement", () => {
    const { lock, page } = productStatements();
    const text = cachedPlanRunner(runnerOf('product'), { versionOf: 'select 1', lock, page });
    expect(page).toMatch(/\$1::json/);
    expect(text).not.toMatch(/\$[0-9]/);
    expect(runnerOf('product')).toMatch(/^public\.bench_run_[0-9a-f]{12}$/);
    expect(runnerOf('product')).not.toBe(runnerOf('- index events_body_kept_idx'));
  });
});
