/**
 * `migrate --reassign-to ROLE` refused: the role does not exist (`input`: the argument was wrong),
 * the running role may not hand the schema over, the schema is not an intake-sync install, or it
 * holds objects a third role owns. Nothing was changed (the reassignment is one transaction).
 */
export class ReassignOwnerError extends Error {
  override readonly name = 'ReassignOwnerError';
  constructor(
    message: string,
    /** true when the argument was at fault (the CLI exits 2), false when the database's state or the running role is */
    readonly input = false,
  ) {
    super(message);
  }
}
