import { randomBytes } from 'node:crypto';
import type postgres from 'postgres';

/** A pg_hba.conf rule as pg_hba_file_rules shows it (the fields a message needs). */
export interface HbaRule {
  line_number: number;
  type: string;
  /** comma-joined, as written in the file */
  database: string | null;
  user_name: string | null;
  address: string | null;
  netmask: string | null;
  auth_method: string;
}

/** What the probe found: the server asked for a password, or it let a wrong one in. */
export type PasswordAuthProbe = { asksPassword: true } | { asksPassword: false; rules: HbaRule[] | undefined; client: string | undefined };

/**
 * The message that stops the console in password mode on a server that let a wrong password in:
 * the pg_hba.conf line(s) to change when pg_hba_file_rules was readable, else the
 * address/database/user the line must match. Pure.
 */
export function trustAuthMessage(probe: Extract<PasswordAuthProbe, { asksPassword: false }>, database: string, user: string): string {
  const lines = (probe.rules ?? [])
    .filter((r) => r.auth_method === 'trust' && r.type.startsWith('host'))
    .map((r) => {
      const where = [r.type, r.database ?? '', r.user_name ?? '', r.address ?? '', r.netmask ?? '', r.auth_method]
        .filter((s) => s !== '')
        .join(' ');
      return `line ${r.line_number} (${where})`;
    });
  const fix = 'change its method to scram-sha-256 and reload the server';
  const which =
    lines.length > 0
      ? `pg_hba.conf ${lines.join(', ')}`
      : `the pg_hba.conf line matching address ${probe.client ?? "(the console's address)"}, database ${database}, user ${user}`;
  return (
    `the database server signed in role "${user}" with a wrong password (trust authentication): in password mode ` +
    `anyone could sign in as any role. ${which}: ${fix}. ` +
    'CONSOLE_ALLOW_TRUST_AUTH=local-development allows it on a loopback CONSOLE_HOST, for local development only.'
  );
}

/**
 * Tries the database with a random wrong password as `user` (a role that need not exist). Refused
 * with 28P01 or 28000: the server asks for a password. Let in: it does not; pg_hba_file_rules is
 * read if the role may (else undefined) and the connection closed.
 */
export async function probePasswordAuth(
  connect: (user: string, password: string) => Promise<postgres.Sql>,
  user: string,
): Promise<PasswordAuthProbe> {
  let sql: postgres.Sql;
  try {
    sql = await connect(user, `wrong-${randomBytes(18).toString('base64url')}`);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === '28P01' || code === '28000') return { asksPassword: true };
    throw error;
  }
  try {
    const [where] = await sql<{ client: string | null }[]>`select host(inet_client_addr()) as client`;
    const rules = await sql<HbaRule[]>`select line_number, type, array_to_string(database, ',') as database,
        array_to_string(user_name, ',') as user_name, address, netmask, auth_method
        from pg_hba_file_rules where error is null order by line_number`.catch(() => undefined);
    return { asksPassword: false, rules: rules ? [...rules] : undefined, client: where?.client ?? undefined };
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}
