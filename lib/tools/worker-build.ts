// The build of the code this process runs, asked once (issue 36): an unversioned worker polls with no
// build id, so visibility names none for its campaigns, and rig.json records it instead, so that
// `rig history` still names the build each run measured. Asked at the first campaign a worker
// provisions and kept: the code a process runs does not change under it, the tree may.
import { resolveBuildId } from './build-id';

let asked: Promise<string | null> | undefined;

/** This process's build id (lib/tools/build-id.ts), or null when none resolves (no git, no RIG_BUILD_ID). */
export function workerBuild(): Promise<string | null> {
  asked ??= resolveBuildId().then(
    (b) => b.buildId,
    () => null,
  );
  return asked;
}
