// `rig rehearse --service-command "..."`: the rehearsal against the user's own build (issue 14) without
// writing a spec. The words of the flag become service.run.command (split on spaces, no shell: an
// argument with a space needs a spec file's argv), a relative program is taken from the folder the
// command was typed in, which is also the service's working folder unless --service-cwd says another.
import path from 'node:path';
import { parseCampaignSpec, SpecError, type CampaignSpec } from '../lib/protocol/spec';

export function withServiceCommand(spec: CampaignSpec, command: string, cwd = process.cwd()): CampaignSpec {
  const words = command.trim().split(/\s+/).filter(Boolean);
  if (!words.length) throw new Error('--service-command: give the command that starts your service, e.g. --service-command "node dist/main.js"');
  const program = words[0].includes('/') ? path.resolve(words[0]) : words[0];
  const folder = path.resolve(cwd);
  const args = words.slice(1);
  try {
    return parseCampaignSpec({ ...spec, service: { ...spec.service, run: { command: [program, ...args], cwd: folder } } });
  } catch (err) {
    if (err instanceof SpecError) throw new Error(`--service-command: ${err.message}`);
    throw err;
  }
}
