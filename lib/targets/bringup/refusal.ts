// Bring-up refuses, with a reason, instead of handing a rig to the measurement that would measure the
// wrong thing. Each refusal names the check that failed; the spec lists the failures that used to be
// silent: a cross-AZ database, a dirty schema, an app role that cannot read the tables the migration
// just made, a service on the admin pool (no RLS on the request path), and a 201 that wrote no row.

export type BringupCheck =
  /** database and app in different availability zones (AWS) */
  | 'availability-zone'
  /** unexpected or missing tables, or an unexpected migration version */
  | 'schema'
  /** the app role cannot SELECT a table the migration made (default privileges missing) */
  | 'app-privileges'
  /** fixtures did not land in the intended livemode partition */
  | 'fixtures'
  /** the service's request path is not the app role under row-level security */
  | 'service-role'
  /** the probe POST did not write exactly its one row in the fixtures' partition */
  | 'probe-write';

export class BringupRefusal extends Error {
  override readonly name = 'BringupRefusal';
  constructor(
    readonly check: BringupCheck,
    readonly reason: string,
  ) {
    super(`bring-up refused (${check}): ${reason}`);
  }
}
