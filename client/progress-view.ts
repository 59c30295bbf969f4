// One line of campaign progress, for `rig campaign watch` and `rig rehearse`.
import type { CampaignProgress } from '../workflows/messages';
import type { CampaignResult } from '../lib/protocol/campaign-result';
import { configurationEnds } from '../lib/protocol/configuration-state';

export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  return h ? `${h}h${String(m).padStart(2, '0')}m` : m ? `${m}m${String(r).padStart(2, '0')}s` : `${r}s`;
}

/**
 * The line; the elapsed time is computed here from the recorded start (omitted without `nowMs`).
 * `intoRepeatS`: how far the running repeat's load is (its activity's last heartbeat), taken off the
 * measuring left, which the workflow counts down only as repeats end: an hour-long soak would
 * otherwise say "~1h00m left" for its whole hour.
 */
export function progressLine(p: CampaignProgress, nowMs?: number, intoRepeatS?: number): string {
  const parts = [`[${p.step}]`];
  if (p.waitingFor) parts.push(`waiting for ${p.waitingFor}`);
  if (p.configuration && p.phase === 'warm-up') parts.push(`${p.configuration} warm-up (not measured)`);
  else if (p.configuration) parts.push(p.repeat ? `${p.configuration} repeat ${p.repeat.k}/${p.repeat.n}${p.phase === 'cool-down' ? ' done, cooling down' : ''}` : p.configuration);
  if (nowMs !== undefined) parts.push(`elapsed ${duration((nowMs - Date.parse(p.startedAt)) / 1000)}`);
  const left = p.phase === 'repeat' && intoRepeatS !== undefined ? Math.max(0, p.secondsLeft - intoRepeatS) : p.secondsLeft;
  if (left > 0) parts.push(`~${duration(left)} of measuring left`);
  const last = p.lastVerdicts[p.lastVerdicts.length - 1];
  if (last) {
    parts.push(`last: ${last.configuration} r${last.index} ${repeatWord(last)}${last.p99Ms !== null ? ` p99 ${last.p99Ms.toFixed(1)} ms` : ''}`);
  }
  if (p.aborting) parts.push('(aborting after this repeat)');
  return parts.join(' · ');
}

/** A repeat's word on the progress line: an invalid or NOT JUDGED repeat is not the target's failure. */
export function repeatWord(r: CampaignProgress['lastVerdicts'][number]): string {
  if (r.passed) return 'PASS';
  if (r.invalid) return `INVALID (${r.invalid.split(':')[0]})`;
  if (r.notJudged?.length) return `NOT JUDGED (${r.notJudged.join(', ')})`;
  return 'FAIL';
}

/** "r2 and r3": the counted repeats of a configuration that were NOT JUDGED (on drift). */
function driftUnjudged(r: CampaignResult, name: string): string {
  const ks = r.repeats.filter((x) => x.configuration === name && !x.invalid && x.notJudged?.length).map((x) => `r${x.index}`);
  return ks.length > 1 ? `${ks.slice(0, -1).join(', ')} and ${ks[ks.length - 1]}` : (ks[0] ?? 'a repeat');
}

/** A few lines on how the campaign ended: every configuration at the count that passed. */
export function resultLines(r: CampaignResult): string[] {
  const lines = [`campaign ${r.campaignId}: ${r.status.toUpperCase()}${r.error ? ` (${r.error})` : ''}`];
  for (const c of configurationEnds(r)) {
    // What ran, not only what passed (lib/protocol/configuration-state.ts).
    const verdict =
      c.state === 'not run'
        ? `not run (0/${c.total} repeats ran)`
        : c.state === 'not judged'
          ? `${c.passed} of ${c.ran} passed; only ${c.ran} of ${c.total} repeats ran: not judged`
          : c.state === 'not judged (instrument)'
            ? `${c.passed} of ${c.ran} valid repeats passed; NOT JUDGED (instrument): a repeat was invalid twice (the generator late or the host's CPU stolen), not the service's failure`
            : c.state === 'not judged (drift)'
              ? `${c.passed} of ${c.ran} repeats passed, none failed; NOT JUDGED (drift): ${driftUnjudged(r, c.name)} passed every other gate, but the drift's interval straddled the limit (too few samples a third to decide; the page names how many would), not the service's failure`
              : `${c.passed}/${c.total} passed${c.state === 'held' ? ', held' : ', NOT held'}${c.driftNoted ? ' (drift noted, not gated: sustained.drift "noted")' : ''}`;
    lines.push(`  ${c.name.padEnd(12)} ${c.eventsPerSecond} ev/s batch ${c.batch}: ${verdict}${c.invalid ? ` (+${c.invalid} invalid, not counted)` : ''}`);
  }
  // Invalid repeats (the instrument's failures): kept and named, never counted.
  for (const x of r.repeats) if (x.invalid) lines.push(`  invalid: ${x.configuration} repeat ${x.index} attempt ${x.attempt} (${x.invalid}), not counted`);
  for (const i of r.interrupted) lines.push(`  interrupted: ${i.configuration} repeat ${i.index} attempt ${i.attempt ?? '?'} (${i.reason}), not counted`);
  // The database side's calibration (issue 31): the same line `rig calibrate --database` ends with.
  // (results recorded before steps were kept have none)
  const dbCal = (r.steps as CampaignResult['steps'] | undefined)?.find((s) => s.step === 'calibrate-database');
  if (dbCal) lines.push(`  ${dbCal.status === 'ok' ? dbCal.summary : `database calibration ${dbCal.status}: ${dbCal.summary}`}`);
  lines.push(`  rig: ${r.rig}${r.cleanAfter ? `; clean-check after teardown: ${r.cleanAfter}` : ''}`);
  if (r.resultsDir) lines.push(`  evidence: ${r.resultsDir}`);
  if (r.reportPath) lines.push(`  report: ${r.reportPath}`);
  return lines;
}
