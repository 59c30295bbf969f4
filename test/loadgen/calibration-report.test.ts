// test-mode: unit
// The floor on the page: calibration.json's floor (calibration case 0) appears in the Conditions
// table and in one line beside the At-a-glance table, in Markdown and HTML; a calibration.json
// written before the floor existed stays readable and shows no floor line.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { buildManifest } from '../../lib/evidence/manifest';
import type { CalibrationFile } from '../../lib/evidence/records';
import { buildReport, renderHtml, renderMarkdown } from '../../lib/evidence/report';
import { makeFixtureCampaign } from '../evidence/fixture-campaign';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-calibration-report-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const small = { repeats: 1, repeatSeconds: 20, probe: false, ceiling: false, denominator: false, unsealed: true, configurations: [{ name: 'only', eventsPerSecond: 500, batch: 5, p99LimitMs: 80 }] };

test('the floor is shown in Conditions and beside the At-a-glance table', async () => {
  const fx = await makeFixtureCampaign({ seed: 3, root, campaignId: 'with-floor', ...small });
  const file: CalibrationFile = {
    calibrated: true,
    cases: [
      { id: 0, name: 'instrument floor (0 ms service time)', passed: true, detail: 'case 0 ...', truth: { joined: 2400, client_only: 0, server_only: 0, server_p50_ms: 0.04, server_p99_ms: 0.11, client_p50_ms: 0.13, client_p99_ms: 0.52, excess_p50_ms: 0.09, excess_p99_ms: 0.41, schedule_lag_p99_ms: 0.3 } },
      { id: 1, name: 'constant 5 ms service time', passed: true, detail: 'case 1 ...' },
    ],
    floor: { samples: 2400, p50_ms: 0.09, p99_ms: 0.41, p99_limit_ms: 80, share_of_limit: 0.005 },
    p99_limit_ms: 80,
    tolerances: { serverP50Ms: 0.2, excessP50Ms: 0.5, floorShareOfLimit: 0.2, floorMinSamples: 2000 },
  };
  fs.writeFileSync(path.join(fx.dir, 'calibration', 'calibration.json'), JSON.stringify(file, null, 2) + '\n');
  await buildManifest(fx.dir);
  const m = await buildReport(fx.dir);
  assert.deepEqual(m.conditions.calibration?.floor, file.floor);
  const text = "client latency minus the server's own time against a 0-ms server: p50 0.09 ms, p99 0.41 ms (0.5 % of the smallest p99 limit, 80 ms; 2,400 requests)";
  const md = renderMarkdown(m);
  assert.ok(md.includes(`| instrument floor | ${text} |`), 'a Conditions row');
  const glance = md.indexOf('## At a glance');
  const mdLine = md.indexOf(`Instrument floor on this host (calibration): ${text}.`);
  assert.ok(glance >= 0 && mdLine > glance && mdLine < md.indexOf('## Method'), 'one line in the At-a-glance section');
  const html = renderHtml(m);
  const line = html.indexOf(`<p class="instrument-floor">Instrument floor on this host (calibration): ${text}.</p>`);
  assert.ok(line > html.indexOf('id="at-a-glance"') && line < html.indexOf('id="method"'), 'the line in the HTML At-a-glance section');
  assert.ok(html.indexOf(`instrument floor</td><td>${text}`) > html.indexOf('id="conditions"') || html.lastIndexOf(text) > html.indexOf('id="conditions"'), 'and the Conditions row');
});

test('a calibration.json from before the floor stays readable: no floor line, nothing invented', async () => {
  const fx = await makeFixtureCampaign({ seed: 4, root, campaignId: 'old-file', ...small });
  await buildManifest(fx.dir);
  const m = await buildReport(fx.dir);
  assert.equal(m.conditions.calibration?.calibrated, true);
  assert.equal(m.conditions.calibration?.floor, null);
  assert.doesNotMatch(renderMarkdown(m), /instrument floor/i);
});
