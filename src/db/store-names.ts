import { sql, type SQL } from 'drizzle-orm';
import { schemaNameProblem } from './schema-name.js';

/**
 * The store's tables, qualified with the deployment's schema. Runtime SQL always names them
 * through these: a search_path is a session setting, which a transaction-mode pooler does not
 * keep, and an unqualified name could then resolve to a vendor table of the same name.
 */
export interface StoreNames {
  schema: string;
  prescriptions: SQL;
  events: SQL;
  feedCheckpoints: SQL;
  feedDeadlines: SQL;
  overduePrescriptions: SQL;
  checkpointResets: SQL;
  quarantine: SQL;
  statusChanges: SQL;
  changeCommits: SQL;
  outbox: SQL;
  feedSources: SQL;
  subscriptionMigrations: SQL;
  /** a function or view of the SQL API, qualified */
  qualified(name: string): SQL;
}

const SIMPLE_NAME = /^[a-z_][a-z0-9_]*$/;

export function storeNames(schema: string): StoreNames {
  const problem = schemaNameProblem(schema);
  if (problem) throw new Error(`schema name ${JSON.stringify(schema)} ${problem}`);
  const qualified = (name: string): SQL => {
    if (!SIMPLE_NAME.test(name)) throw new Error(`not a plain object name: ${JSON.stringify(name)}`);
    return sql.raw(`"${schema}"."${name}"`);
  };
  return {
    schema,
    prescriptions: qualified('prescriptions'),
    events: qualified('events'),
    feedCheckpoints: qualified('feed_checkpoints'),
    feedDeadlines: qualified('feed_deadlines'),
    overduePrescriptions: qualified('overdue_prescriptions'),
    checkpointResets: qualified('checkpoint_resets'),
    quarantine: qualified('quarantine'),
    statusChanges: qualified('status_changes'),
    changeCommits: qualified('change_commits'),
    outbox: qualified('outbox'),
    feedSources: qualified('feed_sources'),
    subscriptionMigrations: qualified('subscription_migrations'),
    qualified,
  };
}

const attached = new WeakMap<object, StoreNames>();

/** Remembers which schema a drizzle handle serves (done once, by openDatabase). */
export function attachStoreNames(db: object, names: StoreNames): void {
  attached.set(db, names);
}

/**
 * The names for the store a drizzle handle was opened on. Call it on the handle openDatabase
 * returned (a transaction handle is a different object): take the names before opening one.
 */
export function namesOf(db: object): StoreNames {
  const names = attached.get(db);
  if (!names)
    throw new Error('namesOf: this handle was not opened by openDatabase (a transaction handle? take the names from the root handle)');
  return names;
}
