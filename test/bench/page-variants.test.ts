import { describe, expect, it } from 'vitest';
import { ALL_OFF, FLOOR_WITH_CHANGES, type SwitchedOff, switchableGroups } from '../../bench/page-variants.js';

describe('bench:page switchable groups', () => {
  const switchedOff: SwitchedOff[] = [
    { kind: 'index', table: 'events', name: 'events_body_kept_idx', statement: 'drop index intake_sync.events_body_kept_idx' },
    {
      kind: 'index',
      table: 'events',
      name: 'events_held_subscription_idx',
      statement: 'drop index intake_sync.events_held_subscription_idx',
    },
    {
      kind: 'index',
      table: 'prescriptions',
      name: 'prescriptions_feed_external_id_key',
      statement: 'alter table intake_sync.prescriptions drop constraint prescriptions_feed_external_id_key',
    },
    {
      kind: 'index',
      table: 'prescriptions',
      name: 'prescriptions_overdue_idx',
      statement: 'drop index intake_sync.prescriptions_overdue_idx',
    },
    {
      kind: 'trigger',
      table: 'prescriptions',
      name: 'prescriptions_status_changes',
      statement: 'alter table intake_sync.prescriptions disable trigger prescriptions_status_changes',
    },
    {
      kind: 'trigger',
      table: 'change_commits',
      name: 'change_commits_stamp',
      statement: 'alter table intake_sync.change_commits disable trigger change_commits_stamp',
    },
    // a trigger of events is a trigger, not an index of events
    { kind: 'trigger', table: 'events', name: 'events_trace', statement: 'alter table intake_sync.events disable trigger events_trace' },
  ];
  const statements = switchedOff.map((o) => o.statement);
  const groups = new Map(switchableGroups(switchedOff).map((g) => [g.name, g.setup]));

  it('puts each index in its table group and every trigger in the trigger group', () => {
    expect(groups.get('product page, every switchable index of events off')).toEqual(statements.slice(0, 2));
    expect(groups.get('product page, every switchable index of prescriptions off')).toEqual(statements.slice(2, 4));
    expect(groups.get('product page, every switchable index off')).toEqual(statements.slice(0, 4));
    expect(groups.get('product page, every switchable trigger off')).toEqual(statements.slice(4));
  });

  it('has the floor, every object off at once, and the floor with the change feed on again', () => {
    const all = switchableGroups(switchedOff);
    expect(all.find((g) => g.name === ALL_OFF)?.setup).toEqual(statements);
    // the change rows' trigger and the commit stamp stay on; every other trigger and every index is off
    expect(all.at(-1)).toEqual({ name: FLOOR_WITH_CHANGES, setup: [...statements.slice(0, 4), statements[6]] });
    for (const g of all) expect(g.name).toContain('switchable');
  });
});
