// A target's preflight said no before anything was made or billed: each failed check with its fix.
// activities/refusal.ts turns it into a non-retryable PreflightRefusal (trying again cannot help until
// the spec or the account changes), so the campaign ends before its first create.
export class PreflightRefusal extends Error {
  override readonly name = 'PreflightRefusal';
  constructor(
    message: string,
    readonly failed: string[],
  ) {
    super(message);
  }
}
