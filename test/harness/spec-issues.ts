// What parseCampaignSpec refuses a spec for: its issues (field and fix), or [] when it is accepted.
// For the spec tests that assert a refusal's words; any other error is a bug and is thrown.
import { parseCampaignSpec, SpecError } from '../../lib/protocol/spec';

export function specIssues(input: unknown): string[] {
  try {
    parseCampaignSpec(input);
    return [];
  } catch (err) {
    if (err instanceof SpecError) return err.issues;
    throw err;
  }
}
