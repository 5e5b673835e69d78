// A sketch of the design the ledger's docs name for the overdue index (docs/performance.md, "The overdue
// index and HOT"), measured as a variant of the product's page so its price is read in the same run: the
// overdue clock kept in a narrow table (prescription, feed, stage, since) by a statement-level trigger over
// the status update's transition tables, indexed (feed, stage, since) for the overdue view's ranges, and
// prescriptions_overdue_idx dropped, so a status change no longer writes a status column into an index.
// Not the product: no view reads the table here; it shows what keeping it costs the page.

/** The variant's name in the ledger (`--only stage`). */
export const OVERDUE_STAGE_SKETCH = 'product page, overdue by stage table (sketch)';

const IN_STAGE = 'n.status_rank between 1 and 3 and n.cancel_delivered_at is null';

/** Statements run once in the variant's copy: the table filled from the prescriptions, the trigger, the index dropped. */
export const overdueStageSketchSetup: string[] = [
  `create table intake_sync.sketch_overdue_stages (
     prescription_id bigint primary key, feed text not null, stage text not null, since timestamptz not null)`,
  'create index sketch_overdue_stages_idx on intake_sync.sketch_overdue_stages (feed, stage, since)',
  `insert into intake_sync.sketch_overdue_stages
     select n.id, n.feed, n.status, n.status_occurred_at from intake_sync.prescriptions n where ${IN_STAGE}`,
  `create function intake_sync.sketch_keep_overdue_stages() returns trigger language plpgsql as $$
   begin
     -- a prescription that entered an overdue stage or moved within them: one narrow row, its stage and since
     insert into intake_sync.sketch_overdue_stages as s (prescription_id, feed, stage, since)
       select n.id, n.feed, n.status, n.status_occurred_at from sketch_new n join sketch_old o on o.id = n.id
       where ${IN_STAGE} and (n.status is distinct from o.status or o.cancel_delivered_at is not null)
     on conflict (prescription_id) do update set stage = excluded.stage, since = excluded.since;
     -- one that left them (delivered, ended, its cancel delivered): its row goes
     delete from intake_sync.sketch_overdue_stages s using sketch_new n join sketch_old o on o.id = n.id
       where s.prescription_id = n.id and not (${IN_STAGE}) and o.status_rank between 1 and 3 and o.cancel_delivered_at is null;
     return null;
   end $$`,
  `create trigger sketch_overdue_stages after update on intake_sync.prescriptions
     referencing old table as sketch_old new table as sketch_new
     for each statement execute function intake_sync.sketch_keep_overdue_stages()`,
  'drop index intake_sync.prescriptions_overdue_idx',
];
