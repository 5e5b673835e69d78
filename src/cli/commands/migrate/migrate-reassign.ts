import type { Config } from '../../../config/config.js';
import { openDatabase } from '../../../db/connection.js';
import { ReassignOwnerError } from '../../../db/errors/reassign-owner-error.js';
import { parseOwnerRoleName } from '../../../db/owner-role-name.js';
import { reassignSchemaOwner } from '../../../operations/ownership/reassign-owner.js';
import { assertSupportedServer } from '../../../db/server-version.js';
import { CliUsageError } from '../../context/errors.js';
import { storeOptions } from '../../context/store-context.js';

/**
 * `migrate --reassign-to ROLE`: validates ROLE before connecting, hands the schema over (one
 * transaction, audited) and says what to run next. Migrates nothing: the running role (a superuser)
 * no longer owns the schema, so the next `migrate` runs as ROLE.
 */
export async function reassignCommand(config: Config, value: string, adoptPublic: boolean): Promise<void> {
  if (adoptPublic) throw new CliUsageError('--reassign-to and --adopt-public: one at a time (adopt first, then hand over)');
  let role: string;
  try {
    role = parseOwnerRoleName(value);
  } catch (error) {
    throw new CliUsageError((error as Error).message, { cause: error });
  }
  if (!config.DATABASE_URL) throw new CliUsageError('--reassign-to: DATABASE_URL is required (the embedded store has no roles)');
  const database = await openDatabase(storeOptions(config));
  try {
    await assertSupportedServer(database);
    const result = await reassignSchemaOwner(database, role);
    process.stdout.write(
      `schema "${result.schema}" and ${result.objects} objects in it handed from ${result.from} to ${result.to} (audited: schema.reassign_owner); ` +
        `next: intake-sync migrate with DATABASE_URL connecting as ${result.to}\n`,
    );
  } catch (error) {
    if (error instanceof ReassignOwnerError && error.input) throw new CliUsageError(error.message, { cause: error });
    throw error;
  } finally {
    await database.close();
  }
}
