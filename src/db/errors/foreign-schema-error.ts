/**
 * `migrate` found the deployment's schema owned by another role, or holding objects another role
 * owns. Every SECURITY DEFINER function of the SQL API runs as the schema's owner and calls helpers
 * in the schema: whoever can create or replace one of them runs code as the owner. Refused, naming
 * the roles and objects; nothing was changed.
 */
export class ForeignSchemaError extends Error {
  override readonly name = 'ForeignSchemaError';
}
