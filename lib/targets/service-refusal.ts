// The service under test cannot be started as the spec says (a command that is not there, a folder
// that is missing, a fixed port someone else holds, no Docker for an image): refused before anything is
// made, naming the field and the fix. Retrying would not change the answer; activities/refusal.ts turns
// it into a non-retryable ServiceRefusal.
export class ServiceRefusal extends Error {
  override readonly name = 'ServiceRefusal';
}
