import postgres from 'postgres';
import { ADMIN_URL } from '../../helpers/db.js';
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

  /** Refuses new connections to the database (a sustained outage) and ends the current ones. */
  async refuseConnections(): Promise<void> {
    await this.admin.unsafe(`alter database "${this.database}" allow_connections false`);
    await this.terminateBackends();
  }

  async acceptConnections(): Promise<void> {
    await this.admin.unsafe(`alter database "${this.database}" allow_connections true`);
  }

  /** States of the worker's backends (for failure messages). */
  async backendStates(): Promise<string[]> {
    const rows = await this.admin<{ pid: number; state: string | null; app: string | null }[]>`
      select pid, state, application_name as app from pg_stat_activity where datname = ${this.database}`;
    return rows.map((r) => `${r.pid}:${r.state ?? '?'}:${r.app ?? ''}`);
  }

  async close(): Promise<void> {
    await this.acceptConnections().catch(() => {});
    await this.admin.end({ timeout: 2 });
  }
}
