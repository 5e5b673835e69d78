import { cpus, totalmem, loadavg } from 'node:os';
import type postgres from 'postgres';

/** What the numbers were measured on. */
export interface MachineInfo {
  cpu_model: string;
  cores: number;
  memory_mb: number;
  load_average_1m_at_start: number;
  node_version: string;
  pg_version: string;
  synchronous_commit: string;
  shared_buffers: string;
  wal_sync_method: string;
}

/** Reads the host's CPU and memory and the Postgres server's version and durability settings. */
export async function describeMachine(sql: postgres.Sql): Promise<MachineInfo> {
  const [row] = await sql<Array<{ version: string; sc: string; sb: string; wsm: string }>>`
    select current_setting('server_version') as version,
           current_setting('synchronous_commit') as sc,
           current_setting('shared_buffers') as sb,
           current_setting('wal_sync_method') as wsm`;
  const cpu = cpus();
  return {
    cpu_model: cpu[0]?.model ?? 'unknown',
    cores: cpu.length,
    memory_mb: Math.round(totalmem() / 2 ** 20),
    load_average_1m_at_start: loadavg()[0] ?? 0,
    node_version: process.version,
    pg_version: row?.version ?? 'unknown',
    synchronous_commit: row?.sc ?? 'unknown',
    shared_buffers: row?.sb ?? 'unknown',
    wal_sync_method: row?.wsm ?? 'unknown',
  };
}
