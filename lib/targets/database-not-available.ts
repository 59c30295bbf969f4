// The database a target waits for did not become available: past the step's bound, or in a status its
// service will not leave by itself (aws: rds-available.ts). Waiting again would only wait past the
// bound, or for a status that will not change, so activities/database-wait-failure.ts makes it
// non-retryable. The message names the bound's spec field, or the status and where to read why.
export class DatabaseNotAvailable extends Error {
  override readonly name = 'DatabaseNotAvailable';
  constructor(
    message: string,
    readonly reason: 'bound' | 'status',
    readonly status: string | undefined,
  ) {
    super(message);
  }
}
