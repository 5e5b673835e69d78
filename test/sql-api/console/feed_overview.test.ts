import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantsScript } from '../../../src/db/grants-script.js';
import { registerFeeds } from '../../../src/db/feed-registry.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase, urlAs } from '../../support/db.js';
import { useLoginRoles } from '../../support/login-roles.js';

// feed_overview judges a feed's lease as the daemon does (lease-sql.ts): unexpired AND held by a backend
// that still exists, by the database's clock, so the console's clock plays no part (issue 34 §6: it said
// "no worker leads it" while the daemon ran). As an app role granted every feed it reads.

const reachable = await postgresReachable();
const APP = `foverview_app_${process.pid}`;

describe.skipIf(!reachable)(`feed_overview's lease, by the database (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  useLoginRoles([APP]);
  let tdb: TestDatabase;
  let owner: postgres.Sql;
  let app: postgres.Sql;
  beforeAll(async () => {
    tdb = await createTestDatabase('feed_overview');
    await registerFeeds(tdb.database.db, ['live', 'lapsed', 'gone', 'none'], 'operator');
    owner = postgres(tdb.url ?? '', { max: 1, onnotice: () => {} });
    await owner.unsafe(grantsScript('app', 'intake_sync', APP, { kind: 'all' }).join('\n'));
    app = postgres(urlAs(tdb.url ?? '', APP), { max: 1, onnotice: () => {} });
    // live: this connection's backend holds it; lapsed: expired a minute ago; gone: unexpired, but its
    // backend (a pid no backend has) is gone, so the daemon would take it at once
    await owner`insert into intake_sync.feed_leases (feed, holder, holder_pid, acquired_at, heartbeat_at, expires_at) values
      ('live', 'h1', pg_backend_pid(), now() - interval '1 hour', now() - interval '3 seconds', now() + interval '12 seconds'),
      ('lapsed', 'h2', pg_backend_pid(), now() - interval '1 hour', now() - interval '75 seconds', now() - interval '60 seconds'),
      ('gone', 'h3', 2147483646, now() - interval '1 hour', now() - interval '2 seconds', now() + interval '13 seconds')`;
    await owner`insert into intake_sync.feed_sources (feed, base_url, api_version, state) values ('live', 'https://op.example/v', '2024-12-10', 'current')`;
  }, 120_000);
  afterAll(async () => {
    await app?.end();
    await owner?.unsafe(`drop owned by "${APP}"`).catch(() => {});
    await owner?.end();
    await tdb?.drop();
  });

  it('says which feed a live worker leads, with ages by the database clock, and the source it reads', async () => {
    const rows = await app<
      {
        feed: string;
        leader_alive: boolean | null;
        leader_heartbeat_age_s: number | null;
        leader_lapsed_s: number | null;
        origin: string;
        source_api_version: string | null;
      }[]
    >`select feed, leader_alive, leader_heartbeat_age_s, leader_lapsed_s, origin, source_api_version from intake_sync.feed_overview order by feed`;
    const by = Object.fromEntries(rows.map((r) => [r.feed, r]));
    expect(by.live?.leader_alive).toBe(true);
    expect(by.live?.leader_heartbeat_age_s).toBeGreaterThanOrEqual(3);
    expect(by.live?.leader_heartbeat_age_s).toBeLessThan(60);
    expect(by.live?.source_api_version).toBe('2024-12-10');
    expect(by.live?.origin).toBe('operator');
    expect(by.lapsed?.leader_alive).toBe(false);
    expect(by.lapsed?.leader_lapsed_s).toBeGreaterThanOrEqual(60);
    expect(by.gone?.leader_alive).toBe(false);
    expect(by.gone?.leader_lapsed_s).toBeLessThan(0);
    expect(by.none?.leader_alive).toBe(false);
    expect(by.none?.leader_heartbeat_age_s).toBeNull();
    expect(by.none?.source_api_version).toBeNull();
  });
});
