import postgres from 'postgres';
import { ADMIN_URL } from '../db.js';
import { HARNESS_APP_NAME } from './store.js';

/**
 * Makes one database go away for the worker without touching any other
 * database on the shared server: its backends are terminated (the harness's
 * own, marked by application_name, are spared), and new connections can be
 * refused for a sustained outage.
 */
export class PostgresOutage {
  private readonly admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });

  constructor(private readonly database: string) {}

  /** Terminates every backend of the database except the harness's; returns how many. */
  async terminateBackends(): Promise<number> {
    const rows = await this.admin<{ terminated: boolean }[]>`
      select pg_terminate_backend(pid) as terminated from pg_stat_activity
       where datname = ${this.database} and pid <> pg_backend_pid()
         and coalesce(application_name, '') <> ${HARNESS_APP_NAME}`;
    return rows.filter((r) => r.terminated).length;
  }

  /**
   * Terminates the database's backends that started less than `maxAgeMs` ago (the harness's spared):
   * in a tight loop these are connections killed while they start up, before or right after the
   * client saw them ready. Returns how many.
   */
  async terminateStartingBackends(maxAgeMs: number): Promise<number> {
    const rows = await this.admin<{ terminated: boolean }[]>`
      select pg_terminate_backend(pid) as terminated from pg_stat_activity
       where datname = ${this.database} and pid <> pg_backend_pid() and backend_type = 'client backend'
         and coalesce(application_name, '') <> ${HARNESS_APP_NAME}
         and backend_start > clock_timestamp() - make_interval(secs => ${maxAgeMs / 1000})`;
    return rows.filter((r) => r.terminated).length;
  }

  /** Refuses new connections to the database (a sustained outage) and ends the current ones. */
  async refuseConnections(): Promise<void> {
    await this.admin.unsafe(`alter database "${this.database}" allow_connections false`);
    await this.terminateBackends();
  }

  async acceptConnections(): Promise<void> {
    await this.admin.unsafe(`alter database "${this.database}" allow_connections true`);
  }

  /** What each of the database's backends is doing (for failure messages): state, wait, age, application, query. */
  async backendStates(): Promise<string[]> {
    const rows = await this.admin<
      { pid: number; state: string | null; wait: string | null; idle_ms: number | null; app: string | null; query: string | null }[]
    >`
      select pid, state, wait_event_type || ':' || wait_event as wait, application_name as app,
             (extract(epoch from clock_timestamp() - state_change) * 1000)::int as idle_ms, left(query, 60) as query
        from pg_stat_activity where datname = ${this.database} and pid <> pg_backend_pid()`;
    return rows.map(
      (r) => `${r.pid}:${r.state ?? '?'}:${r.wait ?? '-'}:${r.idle_ms ?? '?'}ms:${r.app ?? ''}:${(r.query ?? '').replace(/\s+/g, ' ')}`,
    );
  }

  async close(): Promise<void> {
    await this.acceptConnections().catch(() => {});
    await this.admin.end({ timeout: 2 });
  }
}
