import { describe, expect, it } from 'vitest';
import { ALL_OFF, FLOOR_WITH_CHANGES, switchableGroups } from '../../bench/page-variants.js';

describe('bench:page switchable groups', () => {
  const statements = [
    'drop index intake_sync.events_body_kept_idx',
    'drop index intake_sync.events_held_subscription_idx',
    'alter table intake_sync.prescriptions drop constraint prescriptions_feed_external_id_key',
    'drop index intake_sync.prescriptions_overdue_idx',
    'alter table intake_sync.prescriptions disable trigger prescriptions_status_changes',
    'alter table intake_sync.change_commits disable trigger change_commits_stamp',
    // a trigger of events is a trigger, not an index of events
    'alter table intake_sync.events disable trigger events_trace',
  ];
  const groups = new Map(switchableGroups(statements).map((g) => [g.name, g.setup]));

  it('puts each index in its table group and every trigger in the trigger group', () => {
    expect(groups.get('product page, every switchable index of events off')).toEqual(statements.slice(0, 2));
    expect(groups.get('product page, every switchable index of prescriptions off')).toEqual(statements.slice(2, 4));
    expect(groups.get('product page, every switchable index off')).toEqual(statements.slice(0, 4));
    expect(groups.get('product page, every switchable trigger off')).toEqual(statements.slice(4));
  });

  it('has the floor, every object off at once, and the floor with the change feed on again', () => {
    const all = switchableGroups(statements);
    expect(all.find((g) => g.name === ALL_OFF)?.setup).toEqual(statements);
    // the change rows' trigger and the commit stamp stay on; every other trigger and every index is off
    expect(all.at(-1)).toEqual({ name: FLOOR_WITH_CHANGES, setup: [...statements.slice(0, 4), statements[6]] });
    for (const g of all) expect(g.name).toContain('switchable');
  });
});
