// The HTML page in a real browser (Debian's chromium, headless, through playwright-core): it opens
// offline from a file, the At-a-glance table has its rows, and every chart was drawn with data.
// A screenshot is kept in test-output/ (git-ignored) for a human to look at.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { chromium, type BrowserContext } from 'playwright-core';
import { skipUnless } from '../harness/needs-tool';
import { buildReport, pageCharts, renderHtml, type ReportModel } from '../../lib/evidence/report';
import { projectRoot } from '../../lib/tools/paths';
import { makeFixtureCampaign } from './fixture-campaign';

// The page functions below run inside the browser. The project compiles without the DOM library, so
// the little of it they touch is declared here, in module scope (it leaks into no other file).
interface PageCanvas {
  width: number;
  height: number;
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> } } | null;
}
interface PageElement {
  id: string;
  dataset: Record<string, string | undefined>;
  querySelector(selector: string): PageCanvas | null;
}
interface ChartOption {
  series: Array<{ name: string; data?: unknown[]; markArea?: { data: unknown[] } }>;
}
declare const document: { querySelectorAll(selector: string): ArrayLike<PageElement>; querySelector(selector: string): PageElement | null };
declare const window: { echarts: { getInstanceByDom(el: PageElement): { getOption(): ChartOption } | undefined } };

const CHROMIUM = process.env.RIG_CHROMIUM ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const outDir = path.join(projectRoot, 'test-output', 'evidence');
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-browser-test-'));
let context: BrowserContext | undefined;
let model: ReportModel;
let htmlFile: string;

// Without chromium the test is skipped, naming the command (CI, with RIG_REQUIRE_TOOLS=1, fails instead).
const skip = skipUnless(CHROMIUM, "Debian's chromium (or RIG_CHROMIUM)", 'npm run setup:browser');

before(async () => {
  if (skip) return;
  const fx = await makeFixtureCampaign({
    seed: 23,
    root,
    plans: [
      { config: 'single', repeat: 2, stallsAt: [30] },
      { config: 'batched', repeat: 3, window: [20, 40] },
      { config: 'batched', repeat: 4, drops: 40 },
      { config: 'batched', repeat: 2, interruptedFirst: true },
      { config: 'single', repeat: 5, noDbSamples: true },
    ],
  });
  model = await buildReport(fx.dir);
  fs.mkdirSync(outDir, { recursive: true });
  htmlFile = path.join(outDir, 'report.html');
  fs.writeFileSync(htmlFile, renderHtml(model));
  // A fresh profile every run: nothing cached, nothing from an earlier page.
  const userDataDir = fs.mkdtempSync(path.join(root, 'chromium-profile-'));
  context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1300, height: 900 } });
});

after(async () => {
  await context?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

test('the page opens offline, with the At-a-glance rows and every chart drawn with data', { skip }, async () => {
  const page = await context!.newPage();
  const errors: string[] = [];
  const network: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('request', (r) => {
    if (!r.url().startsWith('file:')) network.push(r.url());
  });
  await page.goto(pathToFileURL(htmlFile).href);
  await page.waitForSelector('body[data-charts]', { timeout: 30_000 });

  // At a glance: one row per configuration, in spec order, with N/M written as such.
  const rows = await page.$$eval('#glance tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
  assert.equal(rows.length, 2);
  assert.match(rows[0][0], /^single: 200 ev\/s offered$/);
  assert.match(rows[0][5], /^\d+\.\d ms/);
  assert.equal(rows[0][6], '5/5');
  assert.match(rows[1][0], /^batched: 1,000 ev\/s offered$/);
  assert.equal(rows[1][6], '4/5 (+1 interrupted, not counted)');
  assert.match(rows[1][9], /^1\b/, 'the planted window is counted');

  // Every chart: an ECharts instance whose series hold data, and a canvas with pixels on it.
  const expected = [...pageCharts(model).values()].flat();
  const charts = await page.evaluate(() =>
    Array.from(document.querySelectorAll('.chart')).map((el) => {
      const inst = window.echarts.getInstanceByDom(el);
      const canvas = el.querySelector('canvas');
      let painted = 0;
      if (canvas) {
        const d = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
        for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) painted++;
      }
      return {
        id: el.id,
        kind: el.dataset.kind ?? '',
        owner: el.dataset.owner ?? '',
        instance: !!inst,
        points: inst ? inst.getOption().series.map((s) => (Array.isArray(s.data) ? s.data.length : 0)) : [],
        painted,
        width: canvas?.width ?? 0,
      };
    }),
  );
  assert.equal(charts.length, expected.length);
  assert.ok(charts.length >= 30, `expected a chart set per repeat, got ${charts.length}`);
  for (const c of charts) {
    assert.ok(c.instance, `${c.id} (${c.owner} ${c.kind}) has no ECharts instance`);
    assert.ok(c.points[0] > 0, `${c.id} (${c.owner} ${c.kind}) has an empty first series`);
    assert.ok(c.width > 100 && c.painted > 2000, `${c.id} (${c.owner} ${c.kind}) painted ${c.painted} pixels`);
  }
  const kinds = new Set(charts.map((c) => c.kind));
  assert.deepEqual([...kinds].sort(), ['latency', 'throughput', 'waits', 'wal']);
  // The repeat without DB samples says so instead of drawing an empty chart.
  assert.equal(charts.filter((c) => c.owner === 'single r5-a1').map((c) => c.kind).join(), 'latency,throughput');
  const note = await page.textContent('#runs');
  assert.match(note ?? '', /Wait events and WAL: not sampled/);
  // Freeze-seconds and windows are marked on the latency chart.
  // (No named helper functions inside evaluate: tsx's transform would reference a __name the page lacks.)
  const marks = await page.evaluate(() => {
    const single = window.echarts.getInstanceByDom(document.querySelector('.chart[data-kind="latency"][data-owner="single r2-a1"]')!)!.getOption();
    const batched = window.echarts.getInstanceByDom(document.querySelector('.chart[data-kind="latency"][data-owner="batched r3-a1"]')!)!.getOption();
    return {
      freeze: single.series.find((s) => s.name === 'freeze-second')!.data!.length,
      windows: batched.series.find((s) => s.name === 'p99')!.markArea!.data.length,
    };
  });
  assert.ok(marks.freeze >= 1, 'the stall is marked as a freeze-second');
  assert.equal(marks.windows, 1, 'the planted window is shaded');

  assert.deepEqual(errors, [], 'no script errors');
  assert.deepEqual(network, [], 'the page fetched nothing from the network');
  await page.screenshot({ path: path.join(outDir, 'report.png'), fullPage: true });
  await page.locator('.repeat').first().screenshot({ path: path.join(outDir, 'repeat-charts.png') });
  assert.ok(fs.statSync(path.join(outDir, 'report.png')).size > 50_000);
  await page.close();
});
