// rig step STEP --campaign ID: re-run one step of a campaign against its kept rig (end: keep, or
// keep-on-failure after a failure), in this process, as the spec's scripts could be re-run one by one.
// Evidence goes to the same campaign folder: a re-run repeat is a new attempt folder, never an overwrite.
import { defineCommand, requiredPositional } from '../command';
import { UsageError } from '../parse-flags';
import fs from 'node:fs';
import path from 'node:path';
import * as activities from '../../activities';
import { attemptDir } from '../../activities/repeat';
import { rigHandle } from '../../activities/rig-lifecycle';
import { campaignIdOf } from '../../lib/protocol/campaign-id';
import { parseCampaignSpec } from '../../lib/protocol/spec';
import { campaignDir, SPEC_FILE } from '../../lib/evidence/layout';
import { usesRollup } from '../../lib/protocol/service-spec';
import { connectClient } from '../connect';
import { disarmWatchdog } from '../watchdog-disarm';

export const summary = 'bring-up|seed|repeat|ceiling|denominator|teardown|clean-check|report: re-run one step on a kept rig';

const HELP = `usage: rig step STEP --campaign ID [--config NAME --repeat K]

  bring-up      make the fixtures again and re-verify the rig
  seed          seed the spec's history rows again (and settle)
  repeat        run one sustained repeat again: --config NAME --repeat K (a new attempt folder)
  ceiling       the closed-loop ceiling again
  denominator   the pgbench legs again
  teardown      tear the rig down, check the target is clean, and disarm the campaign's watchdog
  clean-check   is the local target clean?
  report        rebuild report.md/report.html from the evidence

Runs in this process against the campaign's kept rig; the spec comes from its evidence folder.`;

const STEPS = ['bring-up', 'seed', 'repeat', 'ceiling', 'denominator', 'teardown', 'clean-check', 'report'] as const;

/** `rig step STEP --help`: the usage line and that step's own line of HELP. */
const STEP_HELP: Record<string, string> = Object.fromEntries(
  STEPS.map((st) => [st, `usage: rig step ${st} --campaign ID${st === 'repeat' ? ' --config NAME --repeat K' : ''}\n\n${HELP.split('\n').find((l) => l.startsWith(`  ${st} `))}\n\nRuns in this process against the campaign's kept rig; the spec comes from its evidence folder.`]),
);

export const { run, actions, syntax } = defineCommand({
  summary,
  help: HELP,
  actionHelp: STEP_HELP,
  options: { campaign: { type: 'string' }, config: { type: 'string' }, repeat: { type: 'string' } },
  positionals: true,
  async run({ values, positionals }) {
    const step = requiredPositional(positionals, 0, 'step', STEPS);
    if (!values.campaign) throw new UsageError('--campaign ID is required (rig campaign list shows them)');
    const campaignId = campaignIdOf(values.campaign);
    const specFile = path.join(campaignDir(campaignId), SPEC_FILE);
    if (!fs.existsSync(specFile)) throw new Error(`no evidence for campaign ${campaignId} at ${specFile}`);
    const spec = parseCampaignSpec(JSON.parse(fs.readFileSync(specFile, 'utf8')));
    const ref = { campaignId };
    const rig = () => rigHandle(campaignId, spec);
    switch (step) {
      case 'teardown': {
        console.log((await activities.teardownRig({ ...ref, target: spec.target, by: 'operator' })).summary);
        const after = await activities.cleanCheck({ ...ref, target: spec.target, phase: 'after' });
        console.log(`clean-check: ${after.summary}`);
        // Left dirty, the watchdog stays armed: it tries again at its deadline.
        if (!after.clean) return 1;
        console.log(await disarmKept(values.campaign));
        return 0;
      }
      case 'clean-check': {
        const r = await activities.cleanCheck({ ...ref, target: spec.target, phase: 'after' });
        console.log(r.summary);
        return r.clean ? 0 : 1;
      }
      case 'bring-up':
        console.log((await activities.bringUp({ ...ref, rig: rig(), customers: spec.seed.customers })).summary);
        return 0;
      case 'seed':
        console.log((await activities.seedHistory({ ...ref, rig: rig(), rows: spec.seed.historyRows, settleTimeoutSeconds: spec.seed.settleTimeoutSeconds, rebuildRollup: usesRollup(spec.service) })).summary);
        return 0;
      case 'repeat': {
        const s = spec.sustained;
        const configuration = s?.configurations.find((c) => c.name === values.config);
        if (!s || !configuration) throw new Error(`--config must name a sustained configuration of the spec (${s?.configurations.map((c) => c.name).join(', ') ?? 'none'})`);
        const index = Number(values.repeat ?? '1');
        if (!Number.isInteger(index) || index < 1) throw new Error('--repeat must be a repeat number, 1 or more');
        const input = { ...ref, rig: rig(), kind: 'sustained' as const, configuration, index, seconds: s.repeatSeconds, probe: s.probe, driftLimit: s.driftLimit, ...(s.drift === 'noted' ? { driftNoted: true } : {}), maxInFlight: s.maxInFlight };
        let attempt = 1;
        while (fs.existsSync(path.join(campaignDir(campaignId), attemptDir(input, attempt)))) attempt++;
        const out = await activities.runRepeat({ ...input, attempt });
        // A finished load of an earlier attempt is judged, not re-measured: its attempt number is the one to print.
        console.log(`${configuration.name} repeat ${index} attempt ${out.summary.attempt}: ${out.summary.passed ? 'PASS' : 'FAIL'}${out.summary.reasons.length ? ` (${out.summary.reasons.join('; ')})` : ''}; evidence ${out.summary.dir}`);
        return out.summary.passed ? 0 : 1;
      }
      case 'ceiling': {
        const c = spec.ceiling;
        if (!c) throw new Error('the spec has no ceiling');
        const base = { kind: 'ceiling' as const, configuration: { name: 'ceiling', eventsPerSecond: 1, batch: c.batch, p99LimitMs: Number.MAX_SAFE_INTEGER }, index: 1 };
        let attempt = 1;
        while (fs.existsSync(path.join(campaignDir(campaignId), attemptDir(base, attempt)))) attempt++;
        const out = await activities.runRepeat({ ...ref, ...base, rig: rig(), seconds: c.seconds, probe: { rate: 0, p99BudgetMs: 500 }, driftLimit: 1.5, maxInFlight: c.workers, closedLoopWorkers: c.workers, attempt });
        console.log(`ceiling: ${Math.round(out.summary.deliveredRate)} ev/s closed loop; evidence ${out.summary.dir}`);
        return 0;
      }
      case 'denominator': {
        const d = spec.denominator;
        if (!d) throw new Error('the spec has no denominator');
        const out = await activities.runDenominator({ ...ref, rig: rig(), batch: d.batch, clients: d.clients, seconds: d.seconds });
        for (const l of out.legs) console.log(`${l.leg}: ${Math.round(l.rowsPerSecond)} rows/s${l.rowsVerified ? '' : ' (rows NOT verified)'}`);
        return 0;
      }
      case 'report': {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const report = require('./report') as { run(argv: string[]): Promise<number> };
        return report.run([campaignDir(campaignId), '--format', 'md']);
      }
      default:
        throw new UsageError(`unknown step '${step}'`);
    }
  },
});

/** The rig is gone: its watchdog (still armed for a kept rig) stands down. Without a server, says what is left. */
async function disarmKept(campaignWorkflowId: string): Promise<string> {
  let rc;
  try {
    rc = await connectClient();
  } catch (err) {
    return `could not reach Temporal to disarm the watchdog ${campaignWorkflowId}.watchdog (${(err as Error).message.split('\n')[0]}): it finds nothing to remove at its deadline`;
  }
  try {
    return await disarmWatchdog(rc.client, campaignWorkflowId);
  } finally {
    await rc.close();
  }
}
