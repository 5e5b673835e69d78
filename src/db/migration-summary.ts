/** What `migrate` applied, or would apply: migration tags (`0025_overdue_without_probes`) and SQL API files (`feeds/x.sql`). */
export interface MigrationPlan {
  schema: string;
  /** the last migration the schema had before (null: a fresh install) */
  from: string | null;
  /** the last migration this build ships: where the schema is after */
  to: string | null;
  migrations: readonly string[];
  apiFiles: readonly string[];
}

/** `0026_feed_stops` -> `0026`; null (nothing applied yet) -> `none`. Pure. */
export function migrationLevel(tag: string | null): string {
  if (tag === null) return 'none';
  return /^\d+/.exec(tag)?.[0] ?? tag;
}

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * One line saying what changed: `applied 3 migrations and 2 SQL API files to schema "intake_sync"
 * (0024 → 0026)`, `already current at 0026`, or with `dryRun` `would apply …`. Pure.
 */
export function migrationSummary(plan: MigrationPlan, dryRun: boolean): string {
  const where = `schema "${plan.schema}"`;
  const parts = [
    ...(plan.migrations.length > 0 ? [count(plan.migrations.length, 'migration', 'migrations')] : []),
    ...(plan.apiFiles.length > 0 ? [count(plan.apiFiles.length, 'SQL API file', 'SQL API files')] : []),
  ];
  if (parts.length === 0) return `${where} is already current at ${migrationLevel(plan.to)}${dryRun ? ': nothing would be applied' : ''}`;
  const levels = plan.migrations.length > 0 ? `${migrationLevel(plan.from)} → ${migrationLevel(plan.to)}` : `at ${migrationLevel(plan.to)}`;
  return `${dryRun ? 'would apply' : 'applied'} ${parts.join(' and ')} to ${where} (${levels})`;
}

/**
 * The plan from what runMigrations returned (tags, then `sql/api/<path>`) and the files this build
 * ships, in order: the level before is the file just before the first one applied. Pure.
 */
export function planFromApplied(schema: string, shipped: readonly string[], applied: readonly string[]): MigrationPlan {
  const migrations = applied.filter((tag) => !tag.startsWith('sql/api/'));
  const apiFiles = applied.filter((tag) => tag.startsWith('sql/api/')).map((tag) => tag.slice('sql/api/'.length));
  const to = shipped.at(-1) ?? null;
  const first = migrations[0];
  const index = first === undefined ? -1 : shipped.indexOf(first);
  const from = first === undefined ? to : index > 0 ? (shipped[index - 1] ?? null) : null;
  return { schema, from, to, migrations, apiFiles };
}
