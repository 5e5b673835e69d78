import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantsScript } from '../../../src/db/grants-script.js';
import { auditPositionText, parseAuditPosition } from '../../../src/console/pages/audit.js';
import { NEEDS_POSTGRES, postgresReachable } from '../../support/db.js';
import { roleTagStatement } from '../../support/test-run.js';
import { postSignIn, send } from '../../support/console/console-http.js';
import { type ConsoleWorld, createConsoleWorld, FEED_A, FEED_B } from '../../support/console/console-fixture.js';

// The audit page pages by (time, feed, id) since audit_trail's ids count within their feed (0032,
// issue 33 §4): ids of two feeds repeat and carry no order between feeds. A role that sees both feeds
// walks every row exactly once through the Older links, across rows of one transaction (one time) and
// times a microsecond apart (which a JS Date would cut).

describe('the audit position (pure)', () => {
  it('reads back what it writes, and ignores anything else (the first page)', () => {
    const position = { atMicros: '1795945042439123', feed: FEED_A, id: '42' };
    expect(parseAuditPosition(auditPositionText(position))).toEqual(position);
    expect(parseAuditPosition('1795945042439123.7.')).toEqual({ atMicros: '1795945042439123', id: '7', feed: '' });
    for (const bad of [undefined, '', '42', '1.2.Clinic', '1.2.a b', "1.2.a'", '1234567890123456789.1.a', '1.x.a']) {
      expect(parseAuditPosition(bad), String(bad)).toBeUndefined();
    }
  });
});

const real = await postgresReachable();

describe.skipIf(!real)(`the audit page's Older links (${NEEDS_POSTGRES})`, () => {
  let world: ConsoleWorld;
  const role = `audit_all_${randomBytes(3).toString('hex')}`;
  beforeAll(async () => {
    world = await createConsoleWorld('audit_paging');
    await world.owner.unsafe(`create role "${role}" login password '${world.password}'`);
    await world.owner.unsafe(roleTagStatement(role));
    await world.owner.unsafe(grantsScript('app', 'intake_sync', role, { kind: 'all' }).join('\n'));
    // 90 rows of one transaction (one time, both feeds and none), then 120 a microsecond apart
    await world.owner`insert into intake_sync.audit_entries (actor, action, feed, subject)
      select 'tester', 'test.paging', (array[${FEED_A}, ${FEED_B}, null])[1 + g % 3], 'p-' || g from generate_series(1, 90) g`;
    await world.owner`insert into intake_sync.audit_entries (at, actor, action, feed, subject)
      select timestamptz '2026-01-01 00:00:00.000001+00' + (g / 2) * interval '1 microsecond', 'tester', 'test.paging',
        case when g % 2 = 0 then ${FEED_A} else ${FEED_B} end, 'p-' || g from generate_series(91, 210) g`;
  }, 120_000);
  afterAll(async () => {
    await world?.owner.unsafe(`drop owned by "${role}"`).catch(() => {});
    await world?.owner.unsafe(`drop role if exists "${role}"`).catch(() => {});
    await world?.close();
  }, 60_000);

  it('walks every row once, newest first, for a role that sees both feeds', async () => {
    const signedIn = await postSignIn(world.console.url, { role, password: world.password });
    expect(signedIn.status).toBe(303);
    const cookie = signedIn.cookies.join('; ');
    const seen: string[] = [];
    let path: string | undefined = '/audit?action=test.paging';
    let pages = 0;
    while (path && pages < 10) {
      const page = await send(world.console.url, path, { headers: { cookie } });
      expect(page.status).toBe(200);
      seen.push(...[...page.body.matchAll(/test paging (p-[0-9]+)/g)].map((m) => m[1] ?? ''));
      path = /<a href="([^"]+)" rel="next">/.exec(page.body)?.[1]?.replaceAll('&amp;', '&');
      pages += 1;
    }
    expect(pages).toBe(3);
    expect(seen).toHaveLength(210);
    expect(new Set(seen).size).toBe(210);
    // newest first: the transaction's 90 rows (now) before the 120 of 2026-01-01, those in descending time
    expect(seen.slice(0, 90).every((s) => Number(s.slice(2)) <= 90)).toBe(true);
    const dated = seen.slice(90).map((s) => Math.floor(Number(s.slice(2)) / 2));
    expect(dated).toEqual([...dated].sort((a, b) => b - a));
  });
});
