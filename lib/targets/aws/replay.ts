// Test-only: answers chosen AWS operations from files, for what the emulator (moto 5.2.5) does not
// model: DescribeDBEngineVersions (not implemented), DescribeOrderableDBInstanceOptions (empty for
// postgres) and Service Quotas' EC2 quotas (moto has only VPC's). RIG_AWS_REPLAY names a folder; a
// file `<Operation>.json` there answers that operation on every client, and every other operation goes
// to the emulator as usual. Honoured only beside RIG_AWS_ENDPOINT, like emulator-map.ts: against real
// AWS it is refused, so a stray setting can never make preflight pass on made-up answers. Several
// folders may be given, joined by ':'; the first that has an operation's file answers it.
//
// A file is `{ "source": "<the API reference page its shape follows>", "answers": [{ "when"?: {...},
// "response": {...} } | { "when"?: {...}, "error": { "name", "message" } }] }`: the first answer
// whose `when` fields all equal the request's is returned (as the SDK's output: the reference's
// response elements, arrays flattened), or its error thrown. No answer matches: the call fails
// naming the file, so a test never reaches the emulator by accident for a replayed operation.
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';

export const REPLAY_ENV = 'RIG_AWS_REPLAY';

export interface ReplayAnswer {
  when?: Record<string, unknown>;
  response?: Record<string, unknown>;
  error?: { name: string; message: string };
}
export interface ReplayFile {
  source: string;
  answers: ReplayAnswer[];
}

/** The replay folder, or undefined; throws when it is set without an emulator. */
export function replayDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dir = env[REPLAY_ENV];
  if (!dir) return undefined;
  if (!env.RIG_AWS_ENDPOINT) {
    throw new Error(`${REPLAY_ENV} is a test-only setting for the AWS emulator: it needs RIG_AWS_ENDPOINT and is refused against real AWS. Unset ${REPLAY_ENV}.`);
  }
  return dir;
}

/** The replayed answer to `operation` with `input`: undefined when the folder has no file for it. */
export function replayed(dirs: string, operation: string, input: Record<string, unknown>): { output: Record<string, unknown> } | undefined {
  const file = dirs.split(path.delimiter).map((d) => path.join(d, `${operation}.json`)).find((f) => fs.existsSync(f));
  if (!file) return undefined;
  const replay = JSON.parse(fs.readFileSync(file, 'utf8')) as ReplayFile;
  const answer = replay.answers.find((a) => Object.entries(a.when ?? {}).every(([k, v]) => isDeepStrictEqual(input[k], v)));
  if (!answer) throw new Error(`${file}: no replayed answer matches the request ${JSON.stringify(input)}`);
  if (answer.error) throw Object.assign(new Error(answer.error.message), { name: answer.error.name, $fault: 'client', $metadata: { httpStatusCode: 400 } });
  return { output: { $metadata: { httpStatusCode: 200 }, ...answer.response } };
}

interface Stackable {
  middlewareStack: { add(mw: unknown, opts: { step: 'initialize'; name: string }): void };
}

/** Adds the replay to an SDK v3 client: before anything is serialized or sent (the initialize step). */
export function attachReplay(client: Stackable, dir: string): void {
  client.middlewareStack.add(
    (next: (args: { input: Record<string, unknown> }) => Promise<unknown>, context: { commandName?: string }) =>
      async (args: { input: Record<string, unknown> }) => {
        const operation = (context.commandName ?? '').replace(/Command$/, '');
        const hit = replayed(dir, operation, args.input);
        return hit ? { output: hit.output, response: {} } : next(args);
      },
    { step: 'initialize', name: 'rigReplay' },
  );
}
