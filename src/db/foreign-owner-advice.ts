/** Who owns a schema `migrate` was asked to change, and who is asking. */
export interface SchemaOwnerFacts {
  schema: string;
  /** the schema's owner */
  owner: string;
  ownerIsSuperuser: boolean;
  /** the role migrate connected as */
  me: string;
  meIsSuperuser: boolean;
  /** the connected role may use the schema: a runtime or app role (or a superuser) granted into it */
  meUsesSchema: boolean;
}

/**
 * Pure: why `migrate` refuses a schema another role owns, and who should run what. Never advises
 * handing the schema to the caller unless the caller can only be the owner-to-be: a role that is no
 * superuser, holds no grant in the schema (a runtime or app role does), and meets an install a
 * superuser made. Everyone else is told to run migrate as the role that owns the schema.
 */
export function foreignOwnerAdvice(facts: SchemaOwnerFacts): string {
  const { schema, owner, me } = facts;
  const head = `refusing to migrate schema "${schema}": it is owned by role ${owner}, not by the connected role ${me}`;
  if (facts.ownerIsSuperuser && !facts.meIsSuperuser && !facts.meUsesSchema) {
    return (
      `${head}. A schema another role created may hold code every SQL API function would run as its owner. If it is your own ` +
      `install made as the superuser ${owner}, have ${owner} hand it to ${me}: \`intake-sync migrate --reassign-to ${me}\` run as ` +
      `${owner} (audited; docs/getting-started.md), then migrate as ${me}. Otherwise drop it`
    );
  }
  if (facts.ownerIsSuperuser) {
    return (
      `${head}. migrate runs as the schema's owner role, never as a runtime or app role: run it with DATABASE_URL naming ${owner}, ` +
      `or have ${owner} hand the schema to your owner role first (\`intake-sync migrate --reassign-to <the owner role>\` run as ${owner}, audited)`
    );
  }
  return `${head}. migrate runs as the schema's owner: run it with DATABASE_URL naming role ${owner} (docs/security.md "Roles and grants")`;
}
