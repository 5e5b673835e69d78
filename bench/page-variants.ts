import type postgres from 'postgres';
import { OVERDUE_STAGE_SKETCH, overdueStageSketchSetup } from './overdue-stage-sketch.js';

/** One configuration of the page path the ledger measures: what is switched off, and how. */
export interface PageVariant {
  name: string;
  /** statements run once in the variant's own copy of the template, before its first page */
  setup: string[];
  /** the procedure that applies pages from..to */
  runs: 'product' | 'minimal';
  /** the table whose HOT share is read */
  prescriptions: string;
  /** a rewrite of the product's page statement (see storeVariantStatements) */
  rewrite?: (page: string) => string;
  /** events of history seeded in SQL before the first page (bench/page-history.ts) */
  history?: number;
  /** 'per page': run by EXECUTE, planned anew for every page (bench_page_run); else a cached plan, as the daemon runs it */
  planning?: 'per page';
}

/** The bench_statements row a product variant runs: the shipped statements unless it rewrote them. */
export const statementsOf = (v: PageVariant): string => (v.rewrite ? v.name : FULL);

// what the page itself reads: switching these off measures a plan the product never runs
const READ_BY_THE_PAGE = new Set([
  'events_feed_id_pk', // ON CONFLICT (feed, id): the replay guard
  'prescriptions_pkey', // the status update's join
  'prescriptions_feed_identity_key_idx', // the identity match
  'prescriptions_feed_erx_message_id_idx', // the erx match
]);

export const FULL = 'product page (all on)';
export const MINIMAL = 'minimal page';
export const PLANNED_PER_PAGE = 'product page, planned per page';
/** every variant that switches off a group of objects at once is named from here (`--only switchable`) */
const GROUP = 'product page, every switchable';
export const ALL_OFF = `${GROUP} object off`;
export const FLOOR_WITH_CHANGES = `${GROUP} object off but the change rows and the commit stamp`;

/**
 * The ledger's variants, read from the template's catalog so a new index or trigger joins the ledger
 * by itself: the product as shipped, then each index of events and prescriptions the page writes but
 * does not read dropped, each user trigger the page fires disabled, and the minimal page.
 */
export async function pageVariants(sql: postgres.Sql): Promise<{ variants: PageVariant[]; readByThePage: string[] }> {
  const indexes = await sql<Array<{ name: string }>>`
    select indexrelid::regclass::text as name from pg_index
    where indrelid in ('intake_sync.events'::regclass, 'intake_sync.prescriptions'::regclass)
    order by indrelid::regclass::text, 1`;
  const triggers = await sql<Array<{ name: string; relation: string }>>`
    select t.tgname as name, t.tgrelid::regclass::text as relation from pg_trigger t
    where not t.tgisinternal and t.tgenabled <> 'D'
      -- what a page fires: triggers on UPDATE of prescriptions (type bit 16), and any trigger of the rows it inserts
      and ((t.tgrelid = 'intake_sync.prescriptions'::regclass and t.tgtype & 16 <> 0)
        or t.tgrelid in ('intake_sync.events'::regclass, 'intake_sync.status_changes'::regclass, 'intake_sync.change_commits'::regclass,
                         'intake_sync.change_commit_feeds'::regclass) and t.tgtype & 16 = 0)
    order by 2, 1`;
  const product = (name: string, setup: string[], rewrite?: (page: string) => string): PageVariant => ({
    name,
    setup,
    runs: 'product',
    prescriptions: 'intake_sync.prescriptions',
    ...(rewrite ? { rewrite } : {}),
  });
  const variants: PageVariant[] = [product(FULL, []), { ...product(PLANNED_PER_PAGE, []), planning: 'per page' }];
  const readByThePage: string[] = [];
  const switchedOff: SwitchedOff[] = [];
  for (const { name } of indexes) {
    const bare = name.replace(/^intake_sync\./, '');
    if (READ_BY_THE_PAGE.has(bare)) {
      readByThePage.push(bare);
      continue;
    }
    const constraint = await sql`select 1 from pg_constraint where conindid = ${name}::regclass`;
    const relation = bare.startsWith('events') ? 'intake_sync.events' : 'intake_sync.prescriptions';
    const drop = constraint.length > 0 ? `alter table ${relation} drop constraint ${bare}` : `drop index ${name}`;
    variants.push(product(`- index ${bare}`, [drop]));
    switchedOff.push({ kind: 'index', table: relation.replace(/^intake_sync\./, ''), name: bare, statement: drop });
  }
  for (const { name, relation } of triggers) {
    const disable = `alter table ${relation} disable trigger ${name}`;
    variants.push(product(`- trigger ${name}`, [disable]));
    switchedOff.push({ kind: 'trigger', table: relation.replace(/^intake_sync\./, ''), name, statement: disable });
  }
  for (const group of switchableGroups(switchedOff)) variants.push(product(group.name, group.setup));
  variants.push(product(OVERDUE_STAGE_SKETCH, overdueStageSketchSetup));
  variants.push({ name: MINIMAL, setup: [], runs: 'minimal', prescriptions: 'minimal.prescriptions' });
  return { variants, readByThePage };
}

/** An index dropped or a trigger disabled by one variant's setup: what it is, and the statement that does it. */
export interface SwitchedOff {
  kind: 'index' | 'trigger';
  /** its table, without the schema */
  table: string;
  name: string;
  statement: string;
}

/** The change feed's triggers on the page path: the change rows, their numbers per feed, the commit stamp. */
const CHANGE_FEED_TRIGGERS = new Set(['prescriptions_status_changes', 'status_changes_feed_serial', 'change_commits_stamp']);

/**
 * The objects in groups, each group the statements that switch its objects off. One at a time they hide each other: a status update is
 * HOT only once no index holds a column it changes, so a group shows what its objects cost together. The
 * floor, every one off at once (no change rows, no outbox answer, no commit stamp), is what the page
 * statement itself costs, which no merge of the objects can go below; the last row adds back what the
 * minimal page writes too (the change rows and the commit stamp), so it compares with the minimal page.
 */
export function switchableGroups(switchedOff: SwitchedOff[]): Array<{ name: string; setup: string[] }> {
  const setup = (keep: (o: SwitchedOff) => boolean): string[] => switchedOff.filter(keep).map((o) => o.statement);
  const index = (o: SwitchedOff): boolean => o.kind === 'index';
  return [
    { name: `${GROUP} index of events off`, setup: setup((o) => index(o) && o.table === 'events') },
    { name: `${GROUP} index of prescriptions off`, setup: setup((o) => index(o) && o.table === 'prescriptions') },
    { name: `${GROUP} index off`, setup: setup(index) },
    { name: `${GROUP} trigger off`, setup: setup((o) => !index(o)) },
    { name: ALL_OFF, setup: setup(() => true) },
    // the floor with the durable work the minimal page does too: the change rows, numbered, and the commit stamp
    { name: FLOOR_WITH_CHANGES, setup: setup((o) => index(o) || !CHANGE_FEED_TRIGGERS.has(o.name)) },
  ];
}
