// AWS SDK errors by name: the SDK v3 gives each service exception its code as `name` (RDS's end in
// "Fault" in some models and not in others, so both spellings match).
export function isNamed(err: unknown, ...names: string[]): boolean {
  return err instanceof Error && names.some((n) => err.name === n || err.name === `${n}Fault`);
}
