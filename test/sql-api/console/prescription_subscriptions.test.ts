import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantsScript } from '../../../src/db/grants-script.js';
import { registerFeeds } from '../../../src/db/feed-registry.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase, urlAs } from '../../support/db.js';
import { useLoginRoles } from '../../support/login-roles.js';

// prescription_subscriptions(): a prescription's own subscription and those a resolve linked to it
// (subscription_links), as an app role granted clinic_a only; another feed's prescription reads nothing.

const reachable = await postgresReachable();
const APP = `rxsubs_app_${process.pid}`;

describe.skipIf(!reachable)(`prescription_subscriptions() as an app role (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  useLoginRoles([APP]);
  let tdb: TestDatabase;
  let owner: postgres.Sql;
  let app: postgres.Sql;
  beforeAll(async () => {
    tdb = await createTestDatabase('rx_subscriptions');
    await registerFeeds(tdb.database.db, ['clinic_a', 'clinic_b'], null);
    owner = postgres(tdb.url ?? '', { max: 1, onnotice: () => {} });
    await owner.unsafe(grantsScript('app', 'intake_sync', APP, { kind: 'feeds', feeds: ['clinic_a'] }).join('\n'));
    app = postgres(urlAs(tdb.url ?? '', APP), { max: 1, onnotice: () => {} });
    await owner.unsafe(`insert into intake_sync.prescriptions (external_id, feed, subscription_id) values
      ('rx-own', 'clinic_a', 'sub-own'), ('rx-none', 'clinic_a', null), ('rx-b', 'clinic_b', 'sub-b')`);
    await owner.unsafe(`insert into intake_sync.subscription_links (feed, subscription_id, prescription_id, event_id, linked_at)
      select 'clinic_a', 'sub-resolved', id, 'ev-9', '2024-12-10T10:00:00Z' from intake_sync.prescriptions where external_id = 'rx-none'`);
    await owner.unsafe(`insert into intake_sync.subscription_links (feed, subscription_id, prescription_id, event_id)
      select 'clinic_b', 'sub-b2', id, 'ev-b' from intake_sync.prescriptions where external_id = 'rx-b'`);
  }, 120_000);
  afterAll(async () => {
    await app?.end();
    await owner?.unsafe(`drop owned by "${APP}"`).catch(() => {});
    await owner?.end();
    await tdb?.drop();
  });

  const of = (feed: string, rx: string) =>
    app<{ subscription_id: string; linked_by: string; event_id: string | null }[]>`select subscription_id, linked_by, event_id
      from intake_sync.prescription_subscriptions(${feed}, ${rx})`;

  it('its own subscription, and one a resolve linked (with the event resolved)', async () => {
    expect(await of('clinic_a', 'rx-own')).toEqual([{ subscription_id: 'sub-own', linked_by: 'registration', event_id: null }]);
    expect(await of('clinic_a', 'rx-none')).toEqual([{ subscription_id: 'sub-resolved', linked_by: 'resolve', event_id: 'ev-9' }]);
  });

  it("another feed's prescription: nothing", async () => {
    expect(await of('clinic_b', 'rx-b')).toEqual([]);
  });
});
